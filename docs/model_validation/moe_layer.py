#!/usr/bin/env python3
"""One MoE layer's forward and backward, predicted against Megatron-Core's single-layer
benchmarks on 8 H100s (EP 8, bf16): tests/functional_tests/test_cases/common/moe_perf of
NVIDIA/Megatron-LM (test_cases.py, baseline.json at cf39a4ddcf, 2025-12-17). Each case is a
perflow config of one MoE layer; `perflow explain --format json` gives its operators and
its dispatch and combine; the MoE layer's share (router, experts, shared expert,
permutations, dispatch, combine; not the attention the benchmark leaves out) is compared
with the measured forward and backward (B + W).

usage: moe_layer.py PERFLOW [--check FILE]   (--check: fail unless FILE holds every row)
"""
import json
import os
import subprocess
import sys
import tempfile

# The benchmark's two proxies (seq 4096, micro batch 1, 8 heads, swiglu experts).
MODELS = {
    "DeepSeek proxy (32 experts, top 8 of 4 of 8 groups, 1 shared)": dict(
        hidden=7168, expert_ffn_hidden=2048, experts=32, top_k=8, shared_experts=1,
        expert_groups=8, group_top_k=4),
    "Mixtral proxy (8 experts, top 2)": dict(
        hidden=4096, expert_ffn_hidden=14336, experts=8, top_k=2),
}
# baseline.json: forward_ms, backward_ms of the bf16 cases on H100.
MEASURED = {
    ("DeepSeek proxy (32 experts, top 8 of 4 of 8 groups, 1 shared)", "alltoall"): (7.12, 10.48),
    ("DeepSeek proxy (32 experts, top 8 of 4 of 8 groups, 1 shared)", "deepep"): (5.68, 9.06),
    ("Mixtral proxy (8 experts, top 2)", "alltoall"): (4.33, 7.68),
    ("Mixtral proxy (8 experts, top 2)", "deepep"): (4.64, 7.85),
}
MOE_OPERATORS = ("router", "expert_", "shared_", "moe_")


def predict(perflow, model, dispatcher, directory):
    config = {
        "model": {"layers": 1, "heads": 8, "ffn_hidden": model["expert_ffn_hidden"],
                  "vocab": 1024, "sequence": 4096, "mlp": "swiglu", "moe_layers": 1, **model},
        "training": {"micro_batch_size": 1, "global_batch_size": 8},
        "device": "h100-sxm",
        "pipeline": {"schedule": "1f1b", "stages": 1},
        "parallelism": {"data_parallel": 8, "expert_parallel": 8, "moe_dispatcher": dispatcher},
        "network": {"gpus_per_node": 8},
    }
    path = os.path.join(directory, f"{dispatcher}.json")
    with open(path, "w") as f:
        json.dump(config, f)
    out = json.loads(subprocess.check_output([perflow, "explain", path, "--format", "json"]))
    position = out["positions"][0]
    ops = [o for o in position["operators"] if o["name"].startswith(MOE_OPERATORS)]
    comm = (position["moe_dispatch_ns"] + position["moe_combine_ns"]) / 1e6
    forward = sum(o["forward_ns"] for o in ops) / 1e6 + comm
    backward = sum(o["backward_ns"] + o["weight_ns"] for o in ops) / 1e6 + comm
    return forward, backward, comm


def main():
    perflow = sys.argv[1]
    rows = ["| case | dispatcher | forward ms (measured) | backward ms (measured) | "
            "dispatch + combine ms |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as directory:
        for name, model in MODELS.items():
            for dispatcher in ("alltoall", "deepep"):
                f, b, comm = predict(perflow, model, dispatcher, directory)
                mf, mb = MEASURED[(name, dispatcher)]
                rows.append(f"| {name} | {dispatcher} | {f:.2f} ({mf:.2f}, "
                            f"{100 * (f - mf) / mf:+.0f}%) | {b:.2f} ({mb:.2f}, "
                            f"{100 * (b - mb) / mb:+.0f}%) | {comm:.2f} |")
    if len(sys.argv) == 4 and sys.argv[2] == "--check":
        with open(sys.argv[3]) as f:
            text = f.read().splitlines()
        missing = [row for row in rows if row not in text]
        for row in missing:
            print(f"{sys.argv[3]} lacks: {row}", file=sys.stderr)
        sys.exit(1 if missing else 0)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
