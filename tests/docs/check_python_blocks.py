#!/usr/bin/env python3
"""Every Python block of README.md and docs/*.md runs, and the values it shows are the module's.

A page's ```python blocks run in order in one namespace (as a reader types them into one
session), in a fresh temporary directory holding a copy of examples/, with the perflow module
on PYTHONPATH. A block must run without an exception. A line that is one expression followed
by a comment starting with a number (`run.makespan  # 270328680 (ns)`) shows a value: the
expression's value, printed, must be that number.

An HTML comment on the line right before the fence changes that (options separated by `;`):
    <!-- check: skip: REASON -->   not run (say why); use sparingly
    <!-- check: with DIR -->        DIR's files (relative to the source directory) are copied
                                    into the working directory first, e.g. a golden case's
                                    profiles for `perflow.costs(["rank-0.json", ...])`

usage: check_python_blocks.py SOURCE_DIR
"""
import ast
import os
import pathlib
import re
import shutil
import sys
import tempfile
import traceback

from markdown_blocks import blocks

source = pathlib.Path(sys.argv[1]).resolve()
pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
failures, ran = [], 0
SHOWN = re.compile(r"^(?P<expr>[^#]+?)\s+#\s*(?P<value>-?[0-9][0-9_.e+]*)\b")


def shown_values(code):
    """The (line number, expression, value) of each line that shows a value."""
    shown = []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return shown
    lines = code.splitlines()
    for node in tree.body:
        if not isinstance(node, ast.Expr) or node.lineno != node.end_lineno:
            continue
        match = SHOWN.match(lines[node.lineno - 1])
        if match:
            shown.append((node.lineno, match.group("expr"), match.group("value")))
    return shown


def run_block(page, start, code, namespace):
    """Runs one block; returns a failure message or None."""
    try:
        compiled = compile(code, f"{page}:{start}", "exec")
    except SyntaxError as e:
        return f"does not parse: {e}"
    try:
        exec(compiled, namespace)
    except Exception:  # the block's own error, whatever it is, is the failure
        return "raised:\n" + traceback.format_exc(limit=4)
    for line, expr, value in shown_values(code):
        got = eval(expr, namespace)
        if str(got) != value:
            return f"line {start + line}: `{expr.strip()}` shows {value}, the module gives {got}"
    return None


for page in pages:
    python_blocks = [b for b in blocks(page.read_text()) if b[0] == "python"]
    if not python_blocks:
        continue
    name = str(page.relative_to(source))
    namespace = {"__name__": "__doc_block__"}
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(source / "examples", pathlib.Path(work) / "examples")
        previous = os.getcwd()
        os.chdir(work)
        try:
            for _, start, body, marker in python_blocks:
                options = [o.strip() for o in (marker or "").split(";") if o.strip()]
                if any(o.startswith("skip:") for o in options):
                    continue
                for option in options:
                    if option.startswith("with "):
                        for f in (source / option[len("with "):].strip()).iterdir():
                            if f.is_file():
                                shutil.copy(f, work)
                    elif not option.startswith("skip:"):
                        failures.append(f"{name}:{start}: unknown check option '{option}'")
                problem = run_block(name, start, "\n".join(body), namespace)
                ran += 1
                if problem:
                    failures.append(f"{name}:{start}: the Python block {problem}")
        finally:
            os.chdir(previous)

for failure in failures:
    print("FAIL:", failure)
print(f"{ran} Python blocks run, {len(failures)} failed")
sys.exit(1 if failures or ran == 0 else 0)
