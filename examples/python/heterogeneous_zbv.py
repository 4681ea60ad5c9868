"""The flagship study from Python: a ZBV pipeline on 4 H100s + 4 A100s.

The same workflow as examples/heterogeneous_zbv.cpp (and the PerFlow-AI prototype's
heterogeneous example), written as a notebook would: build the schedule once per GPU type,
keep stages 0-3 of the H100 graph and 4-7 of the A100 graph, merge them (the boundary
dependences reconnect themselves), simulate on two nodes, check against the schedule built
directly with per-stage costs, and draw. Then the CLI's config of the same run
(examples/heterogeneous_zbv.json) and a what-if over the number of microbatches.

Run: PYTHONPATH=build/release/python python3 examples/python/heterogeneous_zbv.py [out.svg]
In a notebook, a Run shows its timeline inline; pandas.DataFrame(run.columns()) is its table.
"""
import pathlib
import sys

import perflow

# 1. What one pipeline stage (per chunk) costs on each GPU type; 1.5 GB per activation.
h100 = perflow.TaskCosts(forward="1315us", backward="2733us", weight="2650us",
                         activation="1.5GB")
a100 = perflow.TaskCosts(forward="2743us", backward="4563us", weight="4324us",
                         activation="1.5GB")

# 2. The same ZBV schedule built twice, once with each GPU's costs.
sizes = dict(stages=8, microbatches=10, chunks=2)
on_h100 = perflow.build_schedule("zbv", costs=h100, **sizes)
on_a100 = perflow.build_schedule("zbv", costs=a100, **sizes)

# 3. Stages 0-3 from the H100 graph, 4-7 from the A100 graph, merged: the dependences between
#    stage 3 and 4 (both directions of the V) are reconnected.
mixed = perflow.merge([on_h100.filter([0, 1, 2, 3]), on_a100.filter([4, 5, 6, 7])])

# 4. Two nodes of four GPUs: NVLink inside a node, 25 GB/s between; 64 MB cross each stage
#    boundary per microbatch.
network = dict(devices_per_node=4, intra_node=perflow.Link("2us", "300GB/s"),
               inter_node=perflow.Link("5us", "25GB/s"), boundary_bytes=[64e6] * 8)
run = mixed.simulate(**network)

# 5. Check: the merged graph behaves exactly as ZBV built with per-stage costs.
direct = perflow.build_schedule("zbv", costs=[h100] * 4 + [a100] * 4, **sizes).simulate(**network)

fmt = perflow.format_duration
print(f"makespan {fmt(run.makespan)}, bubble ratio {run.bubble_ratio * 100:.2f}%")
for d in run.metrics["devices"]:
    gpu = "H100" if d["device"] < 4 else "A100"
    print(f"  device {d['device']} ({gpu}): busy {fmt(d['busy'])}, "
          f"peak activations {perflow.format_memory(d['peak_memory'])}")
same = run.makespan == direct.makespan
print(f"merged H100 + A100 graphs vs per-stage costs built directly: {fmt(run.makespan)} vs "
      f"{fmt(direct.makespan)}: {'equal' if same else 'DIFFERENT'}")
if not same:
    sys.exit(1)

# 6. Draw it.
out = sys.argv[1] if len(sys.argv) > 1 else "heterogeneous_zbv.svg"
run.save(out, title="ZBV on 4 H100s + 4 A100s",
         subtitle="stages 0-3 H100, 4-7 A100; 8 stages x 10 microbatches x 2 chunks",
         device_labels=["H100"] * 4 + ["A100"] * 4)
print(f"timeline written to {out}")

# 7. The trace as columns: where does device 7 (the last A100) wait?
columns = run.columns()
on_last = columns["device"] == 7
idle = run.makespan - int((columns["end"][on_last] - columns["start"][on_last]).sum())
print(f"device 7 idles {fmt(idle)} of {fmt(run.makespan)}")

# 8. The CLI's config of the flagship (it also models the GPUs' memory), and a what-if.
config = pathlib.Path(__file__).resolve().parent.parent / "heterogeneous_zbv.json"
report = perflow.simulate(config)
print(f"config {config.name}: makespan {fmt(report['makespan_ns'])}, "
      f"bubble ratio {report['bubble_ratio'] * 100:.2f}%")
for microbatches in (10, 20, 40):
    what_if = perflow.simulate(config, set={"/pipeline/microbatches": microbatches})
    print(f"  {microbatches} microbatches: makespan {fmt(what_if['makespan_ns'])}, "
          f"bubble ratio {what_if['bubble_ratio'] * 100:.2f}%")
