#!/usr/bin/env python3
"""Repository hygiene, as CI checks it (tests/CMakeLists.txt: repo.hygiene).

- No tracked file over 5 MB outside tests/data/: big test inputs live there, and nothing else
  should grow every clone.
- No tracked core dump: a file named core, core.<pid> or vgcore.<pid>, or any ELF core file.

usage: check-repo.py [SOURCE_DIR]; exits 77 (skipped) outside a git checkout.
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
if listing.returncode != 0:
    print("not a git checkout: skipped")
    sys.exit(77)

LIMIT = 5 * 1024 * 1024
failures = []
paths = [p for p in listing.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
for path in paths:
    file = root / path
    if not file.is_file():
        continue  # deleted in the work tree, not yet committed
    size = file.stat().st_size
    if size > LIMIT and not path.startswith("tests/data/"):
        failures.append(f"{path} is tracked and {size / 2**20:.1f} MB (over 5 MB outside "
                        f"tests/data/)")
    with file.open("rb") as f:
        head = f.read(18)
    # ELF magic, then e_type (offset 16, little-endian) 4: ET_CORE.
    elf_core = head[:4] == b"\x7fELF" and head[16:18] == b"\x04\x00"
    if elf_core or re.fullmatch(r"(vg)?core(\.\d+)?", file.name):
        failures.append(f"{path} is a core dump and is tracked: `git rm --cached` it "
                        f"(.gitignore ignores core files)")

for failure in failures:
    print("FAIL:", failure)
print(f"repository hygiene: {len(paths)} tracked files, {len(failures)} failed")
sys.exit(1 if failures else 0)
