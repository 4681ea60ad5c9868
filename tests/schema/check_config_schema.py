#!/usr/bin/env python3
"""The config schema (`perflow schema`) against the parser, with Debian's python3-jsonschema.

Every config the project ships or shows (examples, golden-case inputs, configs that
`perflow costs` wrote, snippets of README.md and docs/*.md) validates; a sample of configs the
parser refuses does not, and the parser refuses each of them too.

usage: check_config_schema.py PERFLOW SOURCE_DIR
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


def fail(message):
    failures.append(message)
    print("FAIL:", message)


schema = json.loads(subprocess.run([perflow, "schema"], check=True, capture_output=True,
                                   text=True).stdout)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)


def is_config(doc):
    return isinstance(doc, dict) and "pipeline" in doc


def parser_accepts(doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    result = subprocess.run([perflow, "validate", f.name], capture_output=True, text=True)
    pathlib.Path(f.name).unlink()
    return result.returncode == 0, result.stderr.strip()


# Configs that run: examples, inputs of golden cases that succeed, configs `costs` wrote.
shipped = sorted((source / "examples").glob("*.json"))
# (Only the perflow command's cases: they have an expected exit code.)
for case in sorted(p for p in (source / "tests/golden").iterdir()
                   if (p / "expected.exit").is_file()):
    if (case / "expected.exit").read_text().strip() == "0":
        args = (case / "args").read_text().split()
        shipped += [case / a for a in args if a.endswith(".json") and (case / a).is_file()]
    shipped += sorted(case.glob("expected.out.*.json"))
fixtures = source.parent / "shared" / "fixtures"
if fixtures.is_dir():
    shipped += sorted(fixtures.rglob("*.json"))
# README.md and docs/*.md: every JSON block that is a whole config.
snippets = [(f"{page.relative_to(source)} json block {i}", json.loads(block))
            for page in [source / "README.md"] + sorted((source / "docs").glob("*.md"))
            for i, block in enumerate(re.findall(r"```json\n(.*?)```", page.read_text(), re.S))]

valid = 0
for name, doc in [(str(p), json.loads(p.read_text())) for p in shipped
                  if p.stat().st_size < 1 << 20] + \
        snippets:
    if not is_config(doc):
        continue
    errors = sorted(validator.iter_errors(doc), key=str)
    if errors:
        fail(f"{name} does not validate: {errors[0].message} at /"
             + "/".join(map(str, errors[0].absolute_path)))
    ok, message = parser_accepts(doc)
    if not ok:
        fail(f"{name}: perflow validate refuses it: {message}")
    valid += 1
if valid < 10:
    fail(f"only {valid} shipped configs found")

# Refused: mutations of a good config that break a key, a type, a unit or a bound.
base = json.loads((source / "examples/heterogeneous_zbv.json").read_text())


def mutated(edit):
    doc = copy.deepcopy(base)
    edit(doc)
    return doc


refused = {
    "unknown key": lambda d: d["pipeline"].update(microbatchs=8),
    "unknown top-level key": lambda d: d.update(pipelines={}),
    "string duration without a unit": lambda d: d["device_types"]["H100"].update(forward="2733"),
    "duration with an unknown unit": lambda d: d["device_types"]["H100"].update(forward="1h"),
    "negative duration": lambda d: d["network"].update(p2p_latency=-1),
    "unknown schedule": lambda d: d["pipeline"].update(schedule="zbvv"),
    "zero stages": lambda d: d["pipeline"].update(stages=0),
    "too many chunks": lambda d: d["pipeline"].update(chunks=300),
    "fractional microbatches": lambda d: d["pipeline"].update(microbatches=2.5),
    "bad size": lambda d: d["device_types"]["A100"].update(memory="40 parsecs"),
    "bad rate": lambda d: d["network"]["inter_node"].update(bandwidth="fast"),
    "rate without per second": lambda d: d["network"]["inter_node"].update(bandwidth="5GB"),
    "comment not a string": lambda d: d["network"].update(comment=3),
    "bad stage range": lambda d: d["placement"][0].update(stages="0..3"),
    "placement without stages": lambda d: d["placement"][0].pop("stages"),
    "bad simulation mode": lambda d: d.update(simulation={"mode": "eager"}),
    "bad costs.per": lambda d: d.setdefault("costs", {}).update(per="device"),
    "backward_frees above 1": lambda d: d["device_types"]["H100"].update(backward_frees=1.5),
    "missing pipeline": lambda d: d.pop("pipeline"),
    "custom order with a bad label": lambda d: d["pipeline"].update(order=["F0.0 X1"]),
}
for name, edit in refused.items():
    doc = mutated(edit)
    if validator.is_valid(doc):
        fail(f"refused config '{name}' validates against the schema")
    ok, _ = parser_accepts(doc)
    if ok:
        fail(f"refused config '{name}' is accepted by perflow validate")

if failures:
    print(f"{valid + len(refused) - len(failures)} passed, {len(failures)} failed")
    sys.exit(1)
print(f"{valid + len(refused)} passed, 0 failed")
