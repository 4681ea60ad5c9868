"""What perflow takes from Python, by one rule (perflow/_source.py, python/src/values.cpp):
paths as os.fspath and os.fsencode take them, text that is valid Unicode, dicts json can
encode; anything else a TypeError or ValueError naming the argument (issue 35, section 5)."""
import ast
import json
import os
import pathlib
import subprocess
import sys

import pytest

import perflow
from perflow import _source

CONFIG = {"pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 4},
          "costs": {"forward": 10, "backward": 20, "weight": 0}}

NOT_TEXT = ("not valid text: a lone surrogate \\udcff at index {} (what os.fsdecode makes of a "
            "byte that is not UTF-8: a path may hold one, text may not)")
JSON_TYPES = "(it encodes dict, list, tuple, str, int, float, bool or None)"


def config():
    return json.loads(json.dumps(CONFIG))


def message_of(error, call):
    with pytest.raises(error) as e:
        call()
    return str(e.value)


def test_a_dict_json_cannot_encode_names_the_argument_and_the_pointer():
    cycle = config()
    cycle["pipeline"]["self"] = cycle
    assert message_of(ValueError, lambda: perflow.load_config(cycle)) == (
        "config: /pipeline/self: refers back to the top level (a cycle), which json cannot "
        "encode")
    inner = config()
    loop = [1]
    loop.append(loop)
    inner["costs"]["x/y"] = loop
    assert message_of(ValueError, lambda: perflow.simulate(inner)) == (
        "config: /costs/x~1y/1: refers back to /costs/x~1y (a cycle), which json cannot encode")
    # The same object twice is no cycle.
    twice = [1]
    assert _source.to_json({"a": [twice, twice]}, "config") == '{"a": [[1], [1]]}'

    raw = config()
    raw["pipeline"]["schedule"] = b"1f1b"
    assert message_of(TypeError, lambda: perflow.load_config(raw)) == (
        f"config: /pipeline/schedule: json cannot encode a value of type bytes {JSON_TYPES}")
    key = config()
    key["pipeline"][("a", 1)] = 1
    assert message_of(TypeError, lambda: perflow.summary(key)) == (
        "config: /pipeline: a key of type tuple; json takes str, int, float, bool or None keys")
    nan = config()
    nan["costs"]["forward"] = float("nan")
    assert message_of(ValueError, lambda: perflow.load_config(nan)) == (
        "config: /costs/forward: nan is not a JSON number")

    deep = config()
    nested = []
    for _ in range(5000):
        nested = [nested]
    deep["description"] = nested
    assert message_of(ValueError, lambda: perflow.load_config(deep)) == (
        "config: nested 5002 levels deep, deeper than json encodes (the recursion limit is "
        f"{sys.getrecursionlimit()})")

    surrogate = config()
    surrogate["description"] = "caf\udcff"
    assert message_of(ValueError, lambda: perflow.load_config(surrogate)) == (
        "config: /description: " + NOT_TEXT.format(3))


def test_overrides_json_cannot_encode_name_set_and_the_pointer():
    assert message_of(TypeError, lambda: perflow.load_config(
        CONFIG, set={"/description": b"x"})) == (
        f"set: /description: json cannot encode a value of type bytes {JSON_TYPES}")
    assert message_of(ValueError, lambda: perflow.load_config(
        CONFIG, set={"/costs": {"forward": float("inf")}})) == (
        "set: /costs/forward: inf is not a JSON number")
    assert message_of(ValueError, lambda: perflow.load_config(
        CONFIG, set={"/description": "\udcff"})) == "set: /description: " + NOT_TEXT.format(0)
    assert message_of(ValueError, lambda: perflow.load_config(
        CONFIG, set=["/description=\udcff"])) == "set: " + NOT_TEXT.format(13)
    assert message_of(TypeError, lambda: perflow.load_config(CONFIG, set={1: 2})) == (
        "set: expected JSON pointers (str) as keys, found int")
    # What json encodes still works: an override's value of any JSON type.
    assert perflow.load_config(CONFIG, set={"/pipeline": {"schedule": "gpipe", "stages": 3,
                                                          "microbatches": 6}}).stages == 3


def test_sweeps_and_searches_as_dicts_follow_the_same_rule():
    assert message_of(TypeError, lambda: perflow.sweep({"base": CONFIG, "axes": {b"": 1}})) == (
        "sweep_config: /axes: a key of type bytes; json takes str, int, float, bool or None keys")
    assert message_of(TypeError, lambda: perflow.search({"model": {"preset": b"x"}})) == (
        f"search_config: /model/preset: json cannot encode a value of type bytes {JSON_TYPES}")


def test_text_that_is_not_unicode_names_the_argument(source_dir):
    run = perflow.load_config(CONFIG).simulate()
    graph = run.graph
    calls = {
        "forward": lambda: perflow.TaskCosts(forward="\udcff"),
        "launch_overhead": lambda: perflow.TaskCosts(launch_overhead="\udcff"),
        "activation": lambda: perflow.TaskCosts(activation="\udcff"),
        "latency": lambda: perflow.Link(latency="\udcff"),
        "bandwidth": lambda: perflow.Link(bandwidth="\udcff"),
        "p2p_latency": lambda: perflow.CostTable(p2p_latency="\udcff"),
        "ns": lambda: perflow.format_duration("\udcff"),
        "schedule": lambda: perflow.build_schedule("\udcff", stages=2, microbatches=4),
        "mode": lambda: graph.simulate(mode="\udcff"),
        "by_kind": lambda: graph.scale(by_kind={"\udcff": 2}),
        "title": lambda: run.to_svg(title="\udcff"),
        "subtitle": lambda: run.save("x.svg", subtitle="\udcff"),
        "device_labels": lambda: run.chrome_trace(device_labels=["\udcff", "b"]),
        "preset": lambda: perflow.costs_json("rank-0.json", preset="\udcff"),
        "rank_stage": lambda: perflow.costs_json("rank-0.json", rank_stage={"\udcff": 0}),
        "x": lambda: perflow.plot("results.csv", x="\udcff", y="makespan_ns"),
        "by": lambda: perflow.plot("results.csv", x="a", y="b", by="\udcff"),
    }
    for what, call in calls.items():
        assert message_of(ValueError, call) == f"{what}: " + NOT_TEXT.format(0), what
    assert message_of(ValueError, lambda: perflow.load_config('{"description": "\udcff"}')) \
        == "config: " + NOT_TEXT.format(17)
    # The C++ side's type errors name the argument the same way.
    assert message_of(TypeError, lambda: perflow.build_schedule(1, stages=2, microbatches=4)) \
        == "schedule: expected a str, found int"
    assert message_of(TypeError, lambda: run.to_svg(device_labels="ab")) == (
        "device_labels: expected a list of str, found str")
    assert message_of(TypeError, lambda: run.to_svg(device_labels=["a", 2])) == (
        "device_labels: expected a str, found int")
    # Text that is valid Unicode still goes through (not only ASCII).
    assert "caf\u00e9 \U0001f600" in run.chrome_trace(device_labels=["caf\u00e9 \U0001f600", "b"])
    assert perflow.load_config(dict(config(), description="\U0001f600")).description == \
        "\U0001f600"


def test_a_file_name_that_is_not_utf8_opens(source_dir, tmp_path):
    example = source_dir / "examples" / "1f1b.json"
    raw = os.fsencode(tmp_path) + b"/caf\xff.json"
    with open(raw, "wb") as f:
        f.write(example.read_bytes())
    name = os.fsdecode(raw)  # what os.listdir gives for it
    assert name.endswith("caf\udcff.json")
    expected = perflow.load_config(example).simulate()
    for given in (name, pathlib.Path(name), raw):
        config = perflow.load_config(given)
        assert config.file == name
        assert repr(config) == f"<perflow.Config 1f1b p=4 m=8 v=1 from {tmp_path}/caf\\xff.json>"
        assert config.simulate().makespan == expected.makespan
    # Written under the same name.
    svg = os.fsencode(tmp_path) + b"/t\xff.svg"
    expected.save(os.fsdecode(svg))
    with open(svg, "rb") as f:
        assert f.read().decode() == expected.to_svg()
    # A sweep file of that name, its base beside it.
    sweep = os.fsencode(tmp_path) + b"/sweep\xff.json"
    with open(sweep, "w") as f:
        json.dump({"base": str(example), "axes": {"/pipeline/microbatches": [8]}}, f)
    rows = perflow.sweep(pathlib.Path(os.fsdecode(sweep)))
    assert [(r["/pipeline/microbatches"], r["makespan_ns"]) for r in rows] == \
        [(8, expected.makespan)]
    # A file that is not there is named with its byte shown.
    missing = os.fsdecode(os.fsencode(tmp_path) + b"/no\xff.csv")
    assert message_of(perflow.Error, lambda: perflow.plot(missing, x="a", y="b")) == (
        f"{tmp_path}/no\\xff.csv: cannot open the file for reading")


def test_a_path_with_a_nul_or_empty_is_refused(source_dir, tmp_path):
    path = str(source_dir / "examples" / "1f1b.json")
    cut = path + "\x00x"
    nul = f"{cut!r} holds a NUL character, which no path can (the file name would end there)"
    run = perflow.load_config(path).simulate()
    calls = {
        "config": lambda: perflow.load_config(cut),
        "sweep_config": lambda: perflow.sweep(pathlib.Path(cut)),
        "search_config": lambda: perflow.search(cut.encode()),
        "paths": lambda: perflow.costs([path, cut]),
        "results": lambda: perflow.plot(cut, x="a", y="b"),
        "path": lambda: run.save(cut),
        "measured": lambda: perflow.calibrate(path, cut),
    }
    for what, call in calls.items():
        shown = repr(cut.encode()) if what == "search_config" else repr(cut)
        assert message_of(ValueError, call) == f"{what}: {nul.replace(repr(cut), shown)}", what
    assert message_of(ValueError, lambda: perflow.load_config("")) == (
        "config: expected a path, found ''")
    assert message_of(TypeError, lambda: run.save(3)) == (
        "path: expected a path (str, bytes or os.PathLike), found int")
    # pathlib.Path and bytes wherever a path goes.
    out = tmp_path / "run.svg"
    run.save(out)
    assert out.read_text() == run.to_svg()
    run.save(os.fsencode(tmp_path / "run2.svg"))
    assert (tmp_path / "run2.svg").read_text() == run.to_svg()
    assert perflow.load_config(os.fsencode(path)).file == path


def test_load_config_checks_the_schedule_rules(source_dir, cli):
    """A schedule's refusal of the sizes is load_config's ConfigError, at the field, with the
    message `perflow simulate` prints (issue 30: it came from simulate() only)."""
    path = source_dir / "examples" / "llama3_70b_h100.json"
    done = subprocess.run([cli, "simulate", str(path), "--set", "/pipeline/schedule=zb-h1"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    with pytest.raises(perflow.ConfigError) as e:
        perflow.load_config(path, set=["/pipeline/schedule=zb-h1"])
    assert (e.value.file, e.value.pointer) == (str(path), "/pipeline/chunks")
    assert done.stderr == f"perflow: error: {e.value}\n"
    assert str(e.value) == (f"{path}:/pipeline/chunks: zb-h1 needs exactly 1 chunk per stage, "
                            "got 5")
    # Each part's schedule too.
    parts = {"pipeline": {"schedule": "interleaved-1f1b", "stages": 2, "microbatches": 4,
                          "chunks": 2},
             "costs": {"forward": 10, "backward": 20, "weight": 5},
             "device_types": {"a": {}},
             "parts": [{"stages": 0, "device_type": "a"}, {"stages": 1, "device_type": "a"}]}
    assert perflow.load_config(parts).schedule == "interleaved-1f1b"
    with pytest.raises(perflow.ConfigError) as e:
        perflow.load_config(parts, set={"/parts/0/schedule": "1f1b"})
    assert str(e.value) == ("<dict>:/pipeline/chunks: 1f1b needs exactly 1 chunk per stage, got "
                            "2")


def test_the_docs_load_config_snippet_runs(source_dir, cli, monkeypatch):
    """docs/python.md's load_config line, as written, against the CLI with the same --set."""
    docs = (source_dir / "docs" / "python.md").read_text()
    block = next(b.split("\n", 1)[1] for b in docs.split("```")[1::2]
                 if b.startswith("python\n") and "config = perflow.load_config(" in b)
    call = next(node.value for node in ast.parse(block).body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", None) == "config")
    path = ast.literal_eval(call.args[0])
    overrides = ast.literal_eval(next(k.value for k in call.keywords if k.arg == "set"))
    assert (path, overrides) == ("examples/llama3_70b_h100.json",
                                 ["/pipeline/schedule=zb-h1", "/pipeline/chunks=1"])
    monkeypatch.chdir(source_dir)
    config = perflow.load_config(path, set=overrides)
    args = [a for o in overrides for a in ("--set", o)]
    shown = subprocess.run([cli, "simulate", path, *args], capture_output=True, text=True,
                           check=True).stdout
    assert config.simulate().summary() == shown
