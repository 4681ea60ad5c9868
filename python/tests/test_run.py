"""A Run from Python: its columns, metrics and pictures against what the CLI writes."""
import csv
import json
import subprocess
import sys
import textwrap
from decimal import Decimal

import numpy as np
import pytest

import perflow


def cli_outputs(cli, config, tmp_path, *args):
    subprocess.run([cli, "simulate", str(config), *args], check=True, capture_output=True,
                   cwd=tmp_path)


def test_columns_are_views_without_copies(source_dir):
    run = perflow.load_config(source_dir / "examples" / "1f1b.json").simulate()
    first, second = run.columns(), run.columns()
    assert list(first) == ["device", "lane", "kind", "microbatch", "chunk", "stage", "start",
                           "end"]
    for name in first:
        assert len(first[name]) == run.graph.task_count
        assert np.shares_memory(first[name], second[name]), name
        with pytest.raises(ValueError):
            first[name][0] = 1
    end = first["end"]
    del run, first, second
    # The column keeps the run's memory alive.
    assert int(end.max()) > 0


# A fresh interpreter's first columns, asked for by two threads at once.
FIRST_COLUMNS = textwrap.dedent("""
    import sys, threading
    {before}
    import perflow
    run = perflow.load_config(sys.argv[1]).simulate()
    barrier = threading.Barrier(2)
    answers = []
    def first_columns():
        barrier.wait()
        try:
            answers.append(len(run.columns()["start"]))
        except ImportError as e:
            answers.append(str(e))
    threads = [threading.Thread(target=first_columns, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    print("deadlocked" if any(t.is_alive() for t in threads) else answers)
""")


def first_columns(config, before=""):
    """What the two threads got, from a fresh interpreter (the set-up happens once per
    process). A deadlock holds the GIL, so the threads' join timeout cannot end it: the
    interpreter's does."""
    try:
        done = subprocess.run([sys.executable, "-c", FIRST_COLUMNS.format(before=before),
                               str(config)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("two threads asking for their first run.columns() at once deadlocked")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_first_columns_from_two_threads_at_once(source_dir):
    """Issue 35: pybind11's NumPy set-up (a function-local static) was entered by one thread,
    which released the GIL inside NumPy's import, while the other waited for the static
    holding the GIL: 10 deadlocks in 10 runs. The module now sets it up when it loads."""
    assert first_columns(source_dir / "examples" / "1f1b.json") == "[64, 64]\n"


def test_columns_without_numpy_say_so(source_dir):
    """Without NumPy, perflow still loads and simulates; the columns say what is missing."""
    shown = first_columns(source_dir / "examples" / "1f1b.json",
                          before="sys.modules['numpy'] = None  # as if not installed")
    message = ("perflow's columns are NumPy arrays, and NumPy cannot be imported (Debian: "
               "python3-numpy): ModuleNotFoundError: import of numpy halted; None in "
               "sys.modules")
    assert shown == repr([message, message]) + "\n"


def test_columns_equal_the_chrome_trace(source_dir, cli, tmp_path):
    """Every complete event of the CLI's Chrome trace is one row of the columns, with the same
    device, lane, kind, stage and times (a run with data-parallel lanes)."""
    config = source_dir / "examples" / "llama70b_3d_parallel.json"
    cli_outputs(cli, config, tmp_path, "--chrome-trace", "trace.json")
    text = (tmp_path / "trace.json").read_text()
    run = perflow.load_config(config).simulate()
    assert run.chrome_trace() == text

    events = json.loads(text, parse_float=Decimal)["traceEvents"]
    from_trace = sorted(
        (e["name"], e["pid"] - 1, e["tid"] - 1, e["cat"], e["args"]["stage"],
         int(Decimal(e["ts"]) * 1000), int((Decimal(e["ts"]) + Decimal(e["dur"])) * 1000))
        for e in events if e["ph"] == "X")
    c = run.columns()
    graph = run.graph
    from_columns = sorted(
        (graph.label(t), int(c["device"][t]), int(c["lane"][t]), perflow.KINDS[c["kind"][t]],
         int(c["stage"][t]), int(c["start"][t]), int(c["end"][t]))
        for t in range(graph.task_count))
    assert len(from_trace) == graph.task_count == 2526  # 2520 + stage 0 chunk 0 in 7 buckets, not 1
    assert from_columns == from_trace
    assert {graph.lanes[lane][1] for lane in c["lane"]} >= {"compute", "dp all-reduce"}


def test_metrics_equal_the_report(source_dir):
    run = perflow.load_config(source_dir / "examples" / "heterogeneous_zbv.json").simulate()
    report = run.report()
    assert report == perflow.simulate(source_dir / "examples" / "heterogeneous_zbv.json")
    m = run.metrics
    assert m["makespan"] == report["makespan_ns"] == run.makespan
    assert m["bubble_ratio"] == report["bubble_ratio"] == run.bubble_ratio
    assert m["dependency_bound"] == report["dependency_bound_ns"]
    assert m["total_work"] == report["total_work_ns"]
    for device, in_report in zip(m["devices"], report["devices"]):
        assert device["busy"] == in_report["busy_ns"]
        assert device["peak_memory"] == in_report["peak_memory"]
        assert device["last_finish"] == in_report["last_end_ns"]
    # The critical path is a chain from 0 to the makespan.
    c = run.columns()
    path = m["critical_path"]
    assert c["start"][path[0]] == 0 and c["end"][path[-1]] == run.makespan
    assert all(c["end"][a] <= c["start"][b] for a, b in zip(path, path[1:]))


@pytest.mark.parametrize("flags", [[], ["--memory-chart", "--critical-path", "--arrows"]])
def test_flagship_timeline_equals_the_cli(source_dir, cli, tmp_path, flags):
    config = source_dir / "examples" / "heterogeneous_zbv.json"
    cli_outputs(cli, config, tmp_path, "--svg", "cli.svg", *flags)
    run = perflow.load_config(config).simulate()
    style = dict(memory_chart="--memory-chart" in flags, critical_path="--critical-path" in flags,
                 arrows="--arrows" in flags)
    expected = (tmp_path / "cli.svg").read_text()
    assert run.to_svg(**style) == expected
    run.save(tmp_path / "py.svg", **style)
    assert (tmp_path / "py.svg").read_text() == expected
    if not flags:
        assert run._repr_svg_() == expected


def test_png_equals_the_cli(source_dir, cli, tmp_path):
    config = source_dir / "examples" / "1f1b.json"
    cli_outputs(cli, config, tmp_path, "--timeline", "cli.png")
    run = perflow.load_config(config).simulate()
    png = run.to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png == (tmp_path / "cli.png").read_bytes()
    run.save(str(tmp_path / "py.png"))
    assert (tmp_path / "py.png").read_bytes() == png


def test_a_graph_run_draws_with_given_captions():
    g = perflow.build_schedule("1f1b", stages=2, microbatches=2,
                               costs=perflow.TaskCosts(forward=10, backward=20))
    run = g.simulate()
    # Text is drawn as glyphs: the captions show as different bytes, the same each time.
    svg = run.to_svg(title="two stages", device_labels=["H100", "A100"])
    assert svg.startswith("<?xml") and svg.endswith("</svg>\n")
    assert svg == run.to_svg(title="two stages", device_labels=["H100", "A100"])
    assert svg != run.to_svg() != run.to_svg(title="two stages")
    with pytest.raises(ValueError, match="the report and summary need a config"):
        run.report()
    with pytest.raises(ValueError, match="^width: expected points"):
        run.to_svg(width=1)
    assert run.config is None and repr(run) == "<perflow.Run 8 tasks, makespan 90ns>"


def test_save_refuses_unknown_formats_and_unwritable_paths(tmp_path):
    run = perflow.build_schedule("gpipe", stages=2, microbatches=2).simulate()
    with pytest.raises(perflow.UnknownNameError, match=r"\.gif"):
        run.save(tmp_path / "x.gif")
    with pytest.raises(perflow.IoError) as e:
        run.save(tmp_path / "missing" / "x.svg")
    assert isinstance(e.value, OSError) and "missing" in str(e.value)
    assert not (tmp_path / "x.gif").exists()


def test_threads_get_the_same_answers(source_dir):
    """The C++ work runs without the GIL: runs on several threads at once agree with one run
    alone (no shared state in the library)."""
    from concurrent.futures import ThreadPoolExecutor
    config = perflow.load_config(source_dir / "examples" / "llama70b_3d_parallel.json")
    expected = perflow.simulate_json(config)
    graph = perflow.build_schedule("zbv", stages=8, microbatches=32, chunks=2,
                                   costs=perflow.TaskCosts(forward=3, backward=4, weight=2))
    makespan = graph.simulate().makespan
    with ThreadPoolExecutor(max_workers=4) as pool:
        reports = list(pool.map(lambda _: perflow.simulate_json(config), range(4)))
        makespans = list(pool.map(lambda _: graph.simulate().makespan, range(8)))
    assert reports == [expected] * 4
    assert makespans == [makespan] * 8


def test_table_is_the_cli_trace_table(source_dir, cli, tmp_path):
    config = source_dir / "examples" / "heterogeneous_zbv.json"
    run = perflow.load_config(config).simulate()
    table = run.table()
    subprocess.run([cli, "simulate", str(config), "--trace", "trace.csv"], check=True,
                   capture_output=True, cwd=tmp_path)
    with open(tmp_path / "trace.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert list(table) == rows[0]
    assert len(table["kind"]) == len(rows) - 1 == run.graph.task_count
    for i, row in enumerate(rows[1:]):
        shown = [table[c][i] for c in rows[0]]
        # Names, not codes; None where the CLI leaves a field empty; integers as integers.
        assert [("" if v is None else str(v)) for v in shown] == row, i
    assert {"F", "B", "W"} <= set(table["kind"])
    frame = run.to_pandas()
    assert list(frame.columns) == rows[0] and len(frame) == run.graph.task_count
    assert frame["end_ns"].max() == run.makespan
