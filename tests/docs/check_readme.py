#!/usr/bin/env python3
"""README.md's snippets are what the program does.

- Every `perflow: error: ...` line README shows is printed by some golden case.
- The report example equals the golden report of examples/1f1b.json wherever it shows a
  value ("..." in an array stands for the rest).
- Every `perflow <verb>` README mentions in its command synopsis is a verb `perflow --help`
  lists, and every listed verb is in the synopsis.

usage: check_readme.py PERFLOW SOURCE_DIR
"""
import json
import pathlib
import re
import subprocess
import sys

perflow, source = sys.argv[1], pathlib.Path(sys.argv[2])
readme = (source / "README.md").read_text()
failures, passed = [], 0


def check(condition, message):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(message)
        print("FAIL:", message)


stderr = "".join(p.read_text() for p in (source / "tests/golden").glob("*/expected.stderr"))
error_lines = [line.strip() for line in readme.splitlines()
               if line.strip().startswith("perflow: error: ")]
check(len(error_lines) >= 3, f"README shows only {len(error_lines)} error lines")
for line in error_lines:
    check(line in stderr, f"README's error line is printed by no golden case: {line}")


def matches(shown, actual, where):
    if isinstance(shown, dict):
        check(isinstance(actual, dict), f"{where}: README shows an object")
        for key, value in shown.items():
            check(key in actual, f"{where}/{key}: README shows a field the report lacks")
            if key in actual:
                matches(value, actual[key], f"{where}/{key}")
    elif isinstance(shown, list):
        check(isinstance(actual, list), f"{where}: README shows an array")
        for i, value in enumerate(shown):
            if value == "...":
                return
            check(i < len(actual), f"{where}/{i}: beyond the report's array")
            if i < len(actual):
                matches(value, actual[i], f"{where}/{i}")
    else:
        check(shown == actual, f"{where}: README shows {shown!r}, the report has {actual!r}")


report_block = re.search(r"## Report format.*?```json\n(.*?)```", readme, re.S).group(1)
golden = json.loads((source / "tests/golden/simulate_1f1b_example/expected.out.report.json")
                    .read_text())
matches(json.loads(report_block), golden, "")

help_text = subprocess.run([perflow, "--help"], capture_output=True, text=True).stdout
verbs = set(re.findall(r"^  ([a-z][a-z-]+)\s", help_text.split("SUBCOMMANDS:")[-1], re.M))
synopsis = re.search(r"## The `perflow` command\n\n```\n(.*?)```", readme, re.S).group(1)
shown = set(re.findall(r"^perflow ([a-z][a-z-]+)", synopsis, re.M))
check(len(verbs) >= 7, f"perflow --help lists {sorted(verbs)}")
check(verbs == shown, f"README synopsis {sorted(shown)} != perflow --help {sorted(verbs)}")

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
