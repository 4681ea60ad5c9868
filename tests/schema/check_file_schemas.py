#!/usr/bin/env python3
"""The sweep and search schemas (`perflow schema sweep|search`) against their parsers, with
Debian's python3-jsonschema.

Every sweep and search file the project ships or shows (examples, golden-case inputs, JSON
blocks of README.md and docs/*.md) validates against its schema, and the shipped files run (here, or as golden cases);
a sample of files the parsers refuse does not validate, and the parser refuses each of them
too (`perflow sweep` / `perflow search` exit with code 2 before running anything).

usage: check_file_schemas.py PERFLOW SOURCE_DIR
"""
import copy
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import jsonschema

perflow, source = sys.argv[1], pathlib.Path(sys.argv[2])
failures = []
checks = 0


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def validator_of(kind):
    schema = json.loads(subprocess.run([perflow, "schema", kind], check=True,
                                       capture_output=True, text=True).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


validators = {kind: validator_of(kind) for kind in ("sweep", "search")}

# `perflow schema` alone and `perflow schema config` print the config schema.
plain = subprocess.run([perflow, "schema"], check=True, capture_output=True, text=True).stdout
named = subprocess.run([perflow, "schema", "config"], check=True, capture_output=True,
                       text=True).stdout
if plain != named:
    fail("`perflow schema config` differs from `perflow schema`")
checks += 1


def run_parser(kind, path, directory):
    """perflow sweep|search on a file, outputs in `directory`: (exit code, standard error)."""
    args = [perflow, kind, str(path), "--jobs", "2"]
    args += ["-o", str(pathlib.Path(directory) / ("out.csv" if kind == "sweep" else "out.json"))]
    result = subprocess.run(args, capture_output=True, text=True)
    return result.returncode, result.stderr.strip()


def first_error(kind, doc):
    errors = sorted(validators[kind].iter_errors(doc), key=str)
    if not errors:
        return None
    return f"{errors[0].message} at /" + "/".join(map(str, errors[0].absolute_path))


# Shipped files: examples, and the inputs of the golden cases that succeed.
shipped = {"sweep": [source / "examples/sweep_schedules.json",
                     source / "examples/make_it_fit/sweep.json"],
           "search": [source / "examples/search_llama3_70b.json"]}
# The golden cases run theirs (a search of a 70B model takes minutes under the sanitizers);
# the others run here.
run_by_golden = set()
for case in sorted(p for p in (source / "tests/golden").iterdir()
                   if (p / "expected.exit").is_file()):
    args = (case / "args").read_text().split()
    if args and args[0] in shipped and (case / "expected.exit").read_text().strip() == "0":
        inputs = [(case / a).resolve() for a in args[1:]
                  if a.endswith(".json") and (case / a).is_file()]
        shipped[args[0]] += inputs
        run_by_golden.update(inputs)
for kind, paths in shipped.items():
    for path in sorted(set(p.resolve() for p in paths)):
        error = first_error(kind, json.loads(path.read_text()))
        if error:
            fail(f"{path} does not validate against the {kind} schema: {error}")
        if path not in run_by_golden:
            with tempfile.TemporaryDirectory() as out:
                code, message = run_parser(kind, path, out)
            if code != 0:
                fail(f"{path}: perflow {kind} refuses it: {message}")
        checks += 1
    if len(paths) < 3:
        fail(f"only {len(paths)} shipped {kind} files found")

# A base may leave out what an axis gives, even a key a config requires.
partial = {"base": {"pipeline": {"schedule": "1f1b", "microbatches": 8},
                    "costs": {"forward": 10, "backward": 20, "weight": 15}},
           "axes": {"/pipeline/stages": [2, 4]}}
error = first_error("sweep", partial)
if error:
    fail(f"a sweep whose axis gives /pipeline/stages does not validate: {error}")
with tempfile.TemporaryDirectory() as out:
    path = pathlib.Path(out) / "sweep.json"
    path.write_text(json.dumps(partial))
    code, message = run_parser("sweep", path, out)
    rows = (pathlib.Path(out) / "out.csv").read_text().splitlines() if code == 0 else []
if code != 0 or len(rows) != 3 or not all(row.endswith(",false,") for row in rows[1:]):
    fail(f"a sweep whose axis gives /pipeline/stages does not run: {code} {message} {rows}")
checks += 1

# README and docs: every JSON block that is a sweep (it has axes) or a search (a cluster).
snippets = 0
for page in [source / "README.md"] + sorted((source / "docs").glob("*.md")):
    for i, block in enumerate(re.findall(r"```json\n(.*?)```", page.read_text(), re.S)):
        try:
            doc = json.loads(block)
        except json.JSONDecodeError:
            continue
        kind = "sweep" if isinstance(doc, dict) and "axes" in doc else \
            "search" if isinstance(doc, dict) and "cluster" in doc else None
        if kind is None:
            continue
        error = first_error(kind, doc)
        if error:
            fail(f"{page.name} json block {i} does not validate against the {kind} schema: "
                 f"{error}")
        snippets += 1
        checks += 1
if snippets < 2:
    fail(f"only {snippets} sweep and search snippets found in README.md and docs/")

# Refused: mutations of a good file that break a key, a type or a bound.
sweep_base = json.loads((source / "tests/golden/sweep_csv/sweep.json").read_text())
search_base = json.loads((source / "tests/golden/search_json/search.json").read_text())
axes = "/pipeline/microbatches"
refused = {
    "sweep": {
        "unknown key": lambda d: d.update(axis={}),
        "missing axes": lambda d: d.pop("axes"),
        "missing base": lambda d: d.pop("base"),
        "base a number": lambda d: d.update(base=3),
        "no axes": lambda d: d.update(axes={}),
        "axis not a pointer": lambda d: d["axes"].update({"pipeline/stages": [2]}),
        "axis with a bad escape": lambda d: d["axes"].update({"/pipeline~2stages": [2]}),
        "axis without values": lambda d: d["axes"].update({axes: []}),
        "axis values a string": lambda d: d["axes"].update({axes: "4, 8"}),
        "range without step": lambda d: d["axes"].update({axes: {"from": 4, "to": 8}}),
        "range step 0": lambda d: d["axes"].update({axes: {"from": 4, "to": 8, "step": 0}}),
        "range unknown key": lambda d: d["axes"].update(
            {axes: {"from": 4, "to": 8, "step": 2, "by": 1}}),
        "range from a string": lambda d: d["axes"].update(
            {axes: {"from": "4", "to": 8, "step": 2}}),
        "zip of one pointer": lambda d: d.update(zip=[["/pipeline/schedule"]]),
        "zip member not a string": lambda d: d.update(zip=[["/pipeline/schedule", 3]]),
        "zip not a list": lambda d: d.update(zip="/pipeline/schedule"),
        "comment not a string": lambda d: d.update(comment=1),
    },
    "search": {
        "unknown key": lambda d: d.update(spaces={}),
        "missing cluster": lambda d: d.pop("cluster"),
        "base gives the pipeline": lambda d: d["base"].update(
            pipeline={"schedule": "1f1b", "stages": 2}),
        "base gives placement": lambda d: d["base"].update(placement=[]),
        "base without a model": lambda d: d["base"].pop("model"),
        "base without global_batch_size": lambda d: d["base"]["training"].pop(
            "global_batch_size"),
        "base with an unknown key": lambda d: d["base"].update(modle={}),
        "no GPU types": lambda d: d["cluster"].update(gpus={}),
        "GPU count 0": lambda d: d["cluster"]["gpus"]["H100"].update(count=0),
        "GPU count too large": lambda d: d["cluster"]["gpus"]["H100"].update(count=1 << 21),
        "GPU without a count": lambda d: d["cluster"]["gpus"]["H100"].pop("count"),
        "GPU unknown key": lambda d: d["cluster"]["gpus"]["H100"].update(counts=8),
        "GPU bad memory": lambda d: d["cluster"]["gpus"]["H100"].update(memory="lots"),
        "devices_per_node 0": lambda d: d["cluster"].update(devices_per_node=0),
        "cluster unknown key": lambda d: d["cluster"].update(nodes=1),
        "space unknown key": lambda d: d["space"].update(schedule=["1f1b"]),
        "unknown schedule": lambda d: d["space"].update(schedules=["1f1b", "zbvv"]),
        "custom schedule": lambda d: d["space"].update(schedules=["custom"]),
        "empty pipeline list": lambda d: d["space"].update(pipeline=[]),
        "pipeline depth 0": lambda d: d["space"].update(pipeline=[0, 2]),
        "fractional tensor_parallel": lambda d: d["space"].update(tensor_parallel=[1.5]),
        "bad recompute": lambda d: d["space"].update(recompute=["some"]),
        "offload share above 1": lambda d: d["space"].update(offload=[0, 1.5]),
        "bad layer split": lambda d: d["space"].update(layers=["uneven"]),
        "use_all_gpus not a boolean": lambda d: d["constraints"].update(use_all_gpus="yes"),
        "bad memory cap": lambda d: d["constraints"].update(memory="72 parsecs"),
        "memory cap below 1 byte": lambda d: d["constraints"].update(memory=0.5),
        "top 0": lambda d: d.update(top=0),
    },
}
for kind, cases in refused.items():
    good = sweep_base if kind == "sweep" else search_base
    for name, edit in cases.items():
        doc = copy.deepcopy(good)
        edit(doc)
        if validators[kind].is_valid(doc):
            fail(f"refused {kind} '{name}' validates against the schema")
        with tempfile.TemporaryDirectory() as out:
            path = pathlib.Path(out) / f"{kind}.json"
            path.write_text(json.dumps(doc))
            code, message = run_parser(kind, path, out)
        if code != 2:
            fail(f"refused {kind} '{name}': perflow {kind} exits with {code}, not 2: {message}")
        checks += 1

if failures:
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    sys.exit(1)
print(f"{checks} passed, 0 failed")
