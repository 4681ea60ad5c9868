"""The graph workflow from Python: schedules with costs, the trace operators, simulation."""
import os
import subprocess
import sys

import pytest

import perflow

H100 = perflow.TaskCosts(forward="1315us", backward="2733us", weight="2650us",
                         activation="1.5GB")
A100 = perflow.TaskCosts(forward="2743us", backward="4563us", weight="4324us",
                         activation="1.5GB")
ZBV = dict(stages=8, microbatches=10, chunks=2)


def test_the_example_reproduces_the_cpp_workflow(source_dir, tmp_path):
    """examples/python/heterogeneous_zbv.py prints what examples/heterogeneous_zbv.cpp prints
    and draws the same SVG, byte for byte (the C++ example's golden files)."""
    golden = source_dir / "tests" / "golden" / "example_heterogeneous_zbv"
    out = tmp_path / "heterogeneous_zbv.svg"
    done = subprocess.run([sys.executable, str(source_dir / "examples" / "python" /
                                               "heterogeneous_zbv.py"), str(out)],
                          check=True, capture_output=True, text=True, env=os.environ)
    expected = (golden / "expected.stdout").read_text().replace("@OUT@", str(tmp_path))
    lines = done.stdout.splitlines(keepends=True)
    assert "".join(lines[:11]) == expected
    assert out.read_bytes() == (golden / "expected.out.heterogeneous_zbv.svg").read_bytes()
    # What it adds: the idle time from the columns, the config and the what-if.
    assert lines[11:] == [
        "device 7 idles 37.729ms of 270.329ms\n",
        "config heterogeneous_zbv.json: makespan 270.329ms, bubble ratio 32.20%\n",
        "  10 microbatches: makespan 270.329ms, bubble ratio 32.20%\n",
        "  20 microbatches: makespan 497.222ms, bubble ratio 26.28%\n",
        "  40 microbatches: makespan 962.422ms, bubble ratio 23.83%\n",
    ]


def test_filter_keeps_stages_and_merge_reconnects_them():
    on_h100 = perflow.build_schedule("zbv", costs=H100, **ZBV)
    assert (on_h100.task_count, on_h100.device_count) == (480, 8)
    first, last = on_h100.filter([0, 1, 2, 3]), on_h100.filter([4, 5, 6, 7])
    assert first.stages == [0, 1, 2, 3]
    assert (first.graph.task_count, last.graph.task_count) == (240, 240)
    # 10 microbatches x 2 chunks cross the 3|4 boundary forward and back: 40 open edges.
    assert first.open_boundaries == 40 and last.open_boundaries == 40
    merged = perflow.merge([first, last])
    assert merged.task_count == 480 and merged.edge_count == on_h100.edge_count
    assert merged.simulate().makespan == on_h100.simulate().makespan
    # The parts' order does not matter.
    assert perflow.merge([last, first]).simulate().makespan == merged.simulate().makespan
    # A part outlives the graph it was cut from.
    del on_h100
    assert first.graph.columns()["stage"].max() == 3


def test_merge_refuses_what_does_not_fit():
    g = perflow.build_schedule("1f1b", stages=4, microbatches=4, costs=H100)
    with pytest.raises(perflow.ScheduleError) as e:
        perflow.merge([g.filter([0, 1]), g.filter([1, 2, 3])])
    assert "stage 1" in str(e.value)
    with pytest.raises(perflow.ScheduleError) as e:
        perflow.merge([g.filter([0, 1])])
    assert isinstance(e.value, ValueError)
    with pytest.raises(perflow.ScheduleError, match="stage 7"):
        g.filter([7])


def test_scale_and_greedy_by_hand():
    """The C++ operator test's 2 x 2 1F1B (F 10, B 20, W 30 ns): 150 ns; W x 2: 210 ns."""
    costs = perflow.TaskCosts(forward=10, backward=20, weight=30, activation=1.0,
                              backward_frees=0.5)
    g = perflow.build_schedule("1f1b", stages=2, microbatches=2, costs=costs,
                               split_backward=True)
    assert g.simulate().makespan == 150
    scaled = perflow.scale(g, by_kind={"W": 2.0})
    assert scaled.simulate().makespan == 210
    assert list(scaled.columns()["duration"]) == [
        60 if perflow.KINDS[k] == "W" else d
        for k, d in zip(g.columns()["kind"], g.columns()["duration"])]
    assert g.scale(by_stage=[1.0, 3.0]).columns()["duration"].sum() == \
        (10 + 20 + 30) * 2 + (10 + 20 + 30) * 2 * 3
    with pytest.raises(perflow.UnknownNameError, match="unknown task kind 'X'"):
        g.scale(by_kind={"X": 2.0})
    with pytest.raises(perflow.ScheduleError, match="factor for kind B is -1"):
        g.scale(by_kind={"B": -1.0})
    # Greedy ignores program order; by hand: d1 runs F0 B0 F1 B1 W0 W1 (backward, forward,
    # weight first), d0 F0 F1 B0 W0 (B1 is not ready at 60) B1 [90, 110] W1 [110, 140].
    greedy = perflow.simulate_graph(g, mode="greedy")
    assert greedy.makespan == 140
    with pytest.raises(perflow.UnknownNameError, match="modes are ordered, greedy"):
        g.simulate(mode="fast")


def test_remap_and_cycles():
    g = perflow.build_schedule("gpipe", stages=2, microbatches=2,
                               costs=perflow.TaskCosts(forward=10, backward=20))
    swapped = perflow.remap(g, [1, 0])
    assert list(swapped.columns()["device"]) == [1 - d for d in g.columns()["device"]]
    assert swapped.simulate().makespan == g.simulate().makespan
    with pytest.raises(perflow.ScheduleError):
        g.remap([0])
    # Both stages on one device, programs in device order: stage 0's backward would wait
    # for stage 1's, which comes after it.
    with pytest.raises(perflow.CycleError) as e:
        g.remap([0, 0])
    assert e.value.cycle and all(isinstance(t, str) for t in e.value.cycle)
    assert isinstance(e.value, perflow.Error)


def test_costs_per_stage_and_chunk():
    table = perflow.CostTable(H100).set(1, 1, A100)
    assert table.at(1, 1) == A100 and table.at(0, 0) == H100 and table.at(3, 1) == H100
    g = perflow.build_schedule("interleaved-1f1b", stages=2, microbatches=4, chunks=2,
                               costs=table)
    durations = {(s, c, perflow.KINDS[k]): d for s, c, k, d in zip(
        g.columns()["stage"], g.columns()["chunk"], g.columns()["kind"],
        g.columns()["duration"])}
    assert durations[(1, 1, "F")] == 2743000 and durations[(1, 0, "F")] == 1315000
    # A list has one TaskCosts per stage, for all its chunks.
    per_stage = perflow.build_schedule("zbv", costs=[H100] * 4 + [A100] * 4, **ZBV)
    forward = {(s, c): d for s, c, k, d in zip(
        per_stage.columns()["stage"], per_stage.columns()["chunk"],
        per_stage.columns()["kind"], per_stage.columns()["duration"]) if k == 0}
    assert forward[(3, 1)] == 1315000 and forward[(4, 0)] == 2743000


def test_costs_values_and_errors():
    assert perflow.TaskCosts(forward="1.5us").forward == 1500
    assert perflow.TaskCosts(activation="64MiB").activation == 64 * 2**20
    with pytest.raises(ValueError, match=r"^forward: '12': "):
        perflow.TaskCosts(forward="12")
    with pytest.raises(ValueError,
                       match=r"^backward: expected a duration from 0 to 576460752303423487 ns, "
                             r"found -1$"):
        perflow.TaskCosts(backward=-1)
    with pytest.raises(TypeError, match=r"^weight: expected a duration, .* found float$"):
        perflow.TaskCosts(weight=1.5)
    with pytest.raises(ValueError, match=r"^backward_frees: expected a fraction in \[0, 1\]"):
        perflow.TaskCosts(backward_frees=2.0)
    with pytest.raises(TypeError, match="expected a TaskCosts, a list of them"):
        perflow.build_schedule("1f1b", stages=2, microbatches=2, costs={"forward": 1})
    with pytest.raises(perflow.ScheduleError) as e:
        perflow.build_schedule("zbv", stages=4, microbatches=8, chunks=3)
    assert e.value.field == "chunks"
    with pytest.raises(perflow.UnknownNameError, match="did you mean 'zb'"):
        perflow.build_schedule("zbw", stages=4, microbatches=8)
    assert perflow.Link("5us", "25GB/s").bandwidth == 25e9
    with pytest.raises(ValueError, match="^bandwidth: 'fast': "):
        perflow.Link(0, "fast")


def test_arguments_out_of_range_are_named():
    import numpy as np
    assert perflow.TaskCosts(forward=np.int64(5), activation=np.float32(2.0)).forward == 5
    with pytest.raises(ValueError, match=r"^forward: expected a duration from 0 to "):
        perflow.TaskCosts(forward=2**62)
    with pytest.raises(ValueError, match=r"^forward: expected a duration from 0 to "):
        perflow.TaskCosts(forward=2**80)
    with pytest.raises(ValueError, match=r"^activation: expected a size from 0 to 1e18"):
        perflow.TaskCosts(activation=-1.0)
    with pytest.raises(ValueError, match=r"^activation: expected a size"):
        perflow.TaskCosts(activation=float("nan"))
    with pytest.raises(TypeError, match=r"^activation: expected a size"):
        perflow.TaskCosts(activation=True)
    with pytest.raises(ValueError, match=r"^costs: expected one TaskCosts per stage \(4\), found 2$"):
        perflow.build_schedule("1f1b", stages=4, microbatches=8, costs=[H100, A100])
    with pytest.raises(perflow.ScheduleError, match="beyond the largest pipeline"):
        perflow.CostTable().set(0, 2**32 - 1, H100)
    g = perflow.build_schedule("1f1b", stages=2, microbatches=2)
    with pytest.raises(TypeError, match=r"^by_kind: expected a number, found str$"):
        g.scale(by_kind={"F": "2"})
    with pytest.raises(TypeError, match=r"^bandwidth: expected a number, found NoneType$"):
        perflow.Link(0, None)
    for call in (lambda: perflow.filter(None, [0]), lambda: perflow.simulate_graph(None),
                 lambda: perflow.scale(None), lambda: perflow.remap(None, [0])):
        with pytest.raises(TypeError):
            call()


def test_messages_with_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"pipeline": {"schedule": "caf\xe9"}}')
    with pytest.raises(perflow.ConfigError) as e:
        perflow.load_config(path)
    assert str(e.value).startswith(str(path)) and e.value.file == str(path)
