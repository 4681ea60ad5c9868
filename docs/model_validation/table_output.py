"""What a validation script does with the table it made: write it (--write FILE), check it
against a file and fail if they differ (--check FILE), or print it."""
import pathlib
import sys


def write_or_check(text, write, check, table="the validation table"):
    if write:
        pathlib.Path(write).write_text(text)
    if check:
        if pathlib.Path(check).read_text() != text:
            print(table, "differs from", check)
            print(text)
            print("1 failed, 0 passed")
            sys.exit(1)
        print("1 passed, 0 failed")
    if not write and not check:
        print(text)
