#!/usr/bin/env python3
"""The host's time per kernel in eager PyTorch, measured on the Kineto traces of tests/data.

For every kernel launch, the outermost CPU operator (`cat: cpu_op`, an aten op as the
dispatcher ran it) around it that launched no other kernel: its CPU span is what the host
paid to issue that kernel, every dispatch layer included (aten::linear around aten::addmm):
Python's call into the op, the dispatcher, the allocator, and the launch API call
(cudaLaunchKernel / hipLaunchKernel, whose own span is shown beside it). Each kernel counts
once. The median over a trace's kernels is its host time per kernel; the default
`kernel_launch` of the GPU presets is the median of the traces' medians, to the microsecond
(docs/model.md, "The host floor").

usage: host_launch.py TRACE_DIR [--check MODEL_MD]
"""
import argparse
import bisect
import gzip
import json
import pathlib
import statistics
import sys

TRACES = [
    ("hta_a100_ddp2_nccl_data_rank0.json.gz", "A100, DDP training step (HTA)"),
    ("hta_a100_alexnet_benchmark_trace.json.gz", "A100, AlexNet forward (HTA, PARAM)"),
    ("hta_v100_ns_resolution_rank-0.pt.trace.json.gz", "V100, training steps (HTA)"),
    ("tracelens_mi300x_ddp8_resnet_act_checkpoint_rank0.json.gz",
     "MI300X, DDP ResNet training (TraceLens)"),
]


def measure(path):
    events = json.load(gzip.open(path))["traceEvents"]
    runtime = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "dur" in e:
            runtime.setdefault(e["tid"], []).append(e)
    starts = {}
    for tid, calls in runtime.items():
        calls.sort(key=lambda e: float(e["ts"]))
        starts[tid] = [float(e["ts"]) for e in calls]
    # Per launch (thread, index): the longest operator around it and no other runtime call.
    outermost = {}
    for op in events:
        if op.get("cat") != "cpu_op" or "dur" not in op:
            continue
        begin = float(op["ts"])
        end = begin + float(op["dur"])
        calls = runtime.get(op["tid"], [])
        first = bisect.bisect_left(starts.get(op["tid"], []), begin)
        last = bisect.bisect_right(starts.get(op["tid"], []), end)
        inside = calls[first:last]
        if len(inside) == 1 and "Launch" in inside[0]["name"]:
            key = (op["tid"], first)
            if key not in outermost or end - begin > outermost[key][0]:
                outermost[key] = (end - begin, float(inside[0]["dur"]))
    op_spans = [span for span, _ in outermost.values()]
    launch_spans = [launch for _, launch in outermost.values()]
    return len(op_spans), statistics.median(op_spans), statistics.median(launch_spans)


def table(trace_dir):
    rows = ["| trace | kernels | host per kernel (median) | of it, the launch call |",
            "|---|---|---|---|"]
    medians = []
    for name, what in TRACES:
        count, op, launch = measure(pathlib.Path(trace_dir) / name)
        medians.append(op)
        rows.append(f"| {what}: `{name}` | {count} | {op:.1f} us | {launch:.1f} us |")
    median = statistics.median(medians)
    rows.append(f"| median of the four | | {median:.2f} us, so {round(median)} us | |")
    return "\n".join(rows) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace_dir")
    parser.add_argument("--check", metavar="MODEL_MD",
                        help="fail unless the page holds this table verbatim")
    args = parser.parse_args()
    text = table(args.trace_dir)
    if args.check:
        page = pathlib.Path(args.check).read_text()
        if text not in page:
            sys.stderr.write(f"{args.check} does not hold the measured table:\n{text}")
            return 1
        print(f"{args.check}: the host-per-kernel table matches the traces")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
