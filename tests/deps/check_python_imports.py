#!/usr/bin/env python3
"""Every Python module the project imports comes from a Debian package install-deps.sh installs.

A module imported by the perflow package, its tests, the test scripts, the benchmarks or the
docs' scripts (and numpy, which the compiled module loads through pybind11/numpy.h) must be
- importable by the interpreter the tests run (Debian's python3),
- from the standard library, or from a file that a Debian package owns (`dpkg -S`), and
- that package must be one scripts/install-deps.sh installs.
A module installed by hand (pip, or a package installed outside the script) passes on the
machine where it was installed and fails on a fresh one; this check fails on both.

Imports guarded by `try: ... except ImportError` (or ModuleNotFoundError) are optional and
not checked.

usage: check_python_imports.py SOURCE_DIR
"""
import ast
import importlib.util
import pathlib
import re
import subprocess
import sys

source = pathlib.Path(sys.argv[1])
roots = ["python", "tests", "bench", "docs", "examples", "scripts"]
files = sorted(p for root in roots for p in (source / root).rglob("*.py"))
# Modules of the project itself: the package, and the scripts' own neighbours.
local = {"perflow", "conftest"} | {p.stem for p in files}


def optional_imports(tree):
    """Nodes inside a try whose handlers catch ImportError/ModuleNotFoundError."""
    guarded = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        names = set()
        for handler in node.handlers:
            caught = handler.type
            items = caught.elts if isinstance(caught, ast.Tuple) else [caught]
            names |= {i.id for i in items if isinstance(i, ast.Name)}
        if names & {"ImportError", "ModuleNotFoundError"}:
            for stmt in node.body:
                guarded |= {id(n) for n in ast.walk(stmt)}
    return guarded


imports = {}  # top-level module -> first file importing it
for path in files:
    tree = ast.parse(path.read_text(), filename=str(path))
    guarded = optional_imports(tree)
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            imports.setdefault(name.split(".")[0], path.relative_to(source))

# The compiled module's own imports at run time.
for cpp in sorted((source / "python/src").glob("*.cpp")) + sorted(
        (source / "python/src").glob("*.hpp")):
    text = cpp.read_text()
    if "pybind11/numpy.h" in text:
        imports.setdefault("numpy", cpp.relative_to(source))
    for name in re.findall(r'module_::import\("([A-Za-z_][\w.]*)"\)', text):
        imports.setdefault(name.split(".")[0], cpp.relative_to(source))

script = (source / "scripts/install-deps.sh").read_text()
# The words of its package lists: `packages=( ... )` and `packages+=( ... )`.
installed_by_script = {word for body in re.findall(r"packages\+?=\(([^)]*)\)", script)
                       for word in re.sub(r"#[^\n]*", "", body).split()}

failures = []
third_party = 0
for name, where in sorted(imports.items()):
    if name in local or name in sys.stdlib_module_names:
        continue
    third_party += 1
    spec = importlib.util.find_spec(name)
    if spec is None or not (spec.origin or spec.submodule_search_locations):
        failures.append(f"{where} imports '{name}', which {sys.executable} cannot import: "
                        f"add its Debian package (python3-{name.lower()}?) to "
                        f"scripts/install-deps.sh")
        continue
    origin = spec.origin if spec.origin not in (None, "namespace") else list(
        spec.submodule_search_locations)[0]
    owner = subprocess.run(["dpkg", "-S", origin], capture_output=True, text=True)
    if owner.returncode != 0:
        failures.append(f"{where} imports '{name}' from {origin}, which no Debian package "
                        f"provides (installed by hand?): install it from a Debian package "
                        f"listed in scripts/install-deps.sh")
        continue
    packages = {p.strip().split(":")[0] for p in owner.stdout.split(":", 1)[0].split(",")}
    if not packages & installed_by_script:
        failures.append(f"{where} imports '{name}' from Debian package "
                        f"{', '.join(sorted(packages))}, which scripts/install-deps.sh does "
                        f"not install")

for failure in failures:
    print("FAIL:", failure)
print(f"{len(files)} files, {third_party} third-party modules, {len(failures)} failed")
sys.exit(1 if failures else 0)
