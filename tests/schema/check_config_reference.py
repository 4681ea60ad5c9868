#!/usr/bin/env python3
"""docs/config-reference.md is what `perflow schema --format markdown` prints: the config
reference is generated from the table the parser and the schema use, and may not drift.

usage: check_config_reference.py PERFLOW SOURCE_DIR
"""
import difflib
import pathlib
import subprocess
import sys

perflow, source = sys.argv[1], pathlib.Path(sys.argv[2])
generated = subprocess.run([perflow, "schema", "--format", "markdown"], check=True,
                           capture_output=True, text=True).stdout
page = source / "docs/config-reference.md"
written = page.read_text() if page.is_file() else ""
if generated != written:
    diff = difflib.unified_diff(written.splitlines(), generated.splitlines(),
                                "docs/config-reference.md", "perflow schema --format markdown",
                                lineterm="")
    print("\n".join(list(diff)[:60]))
    print(f"FAIL: docs/config-reference.md is not what the config table gives; regenerate it "
          f"with\n  {perflow} schema --format markdown > {page}")
    sys.exit(1)
print(f"docs/config-reference.md: {len(written.splitlines())} lines, as generated")
