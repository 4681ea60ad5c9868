#!/usr/bin/env python3
"""Predicted against measured step times of published Megatron-LM runs (measurements.json).

Each row becomes a perflow config (/model, /training, /device a100-80gb, the published
parallel layout, Megatron's even layer split); `perflow simulate --format json` predicts the
step; the table compares it with the measured iteration time. One calibration for all rows:
the device preset's efficiencies, nothing per row.

usage: validate.py PERFLOW [--write FILE | --check FILE] [--configs DIR]
"""
import argparse
import json
import pathlib
import subprocess
import sys

from table_output import write_or_check
import tempfile

here = pathlib.Path(__file__).resolve().parent


def config_for(row):
    m = row["model"]
    positions = row["pp"] * row["vp"]
    schedule = "interleaved-1f1b" if row["vp"] > 1 else "1f1b"
    return {
        "description": row["id"],
        "model": {**m, "kv_heads": m["heads"], "mlp": "gelu", "tied_embeddings": True},
        "training": {
            "micro_batch_size": row["micro_batch"],
            "global_batch_size": row["global_batch"],
            "precision": "fp16",
            "recompute": row["recompute"],
            "sequence_parallel": row["sequence_parallel"],
            "flash_attention": False,
        },
        "device": "a100-80gb",
        # Megatron-LM (2021-22) splits the layers evenly; the embedding and head ride along.
        "pipeline": {"schedule": schedule, "stages": row["pp"], "chunks": row["vp"],
                     "layers": [m["layers"] // positions] * positions},
        # Megatron-LM of 2021-22 ran its own DDP (--DDP-impl local, the default): train_step
        # all-reduces the gradients after forward_backward_func, not under the backward
        # (megatron/training.py, model.allreduce_gradients()); fp16 gradients in fp16 (no
        # --accumulate-allreduce-grads-in-fp32 in the papers' scripts).
        "parallelism": {"tensor_parallel": row["tp"], "data_parallel": row["dp"],
                        "overlap_grad_reduce": False},
        # DGX A100: 8 GPUs a node; a pipeline stage is a tensor-parallel group.
        "network": {"devices_per_node": max(1, 8 // row["tp"])},
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("perflow")
    parser.add_argument("--write")
    parser.add_argument("--check")
    parser.add_argument("--configs")
    args = parser.parse_args()
    rows = json.loads((here / "measurements.json").read_text())
    out_dir = pathlib.Path(args.configs or tempfile.mkdtemp())
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        "| run | GPUs | t x p x d (v) | batch (micro) | recompute | measured | predicted | error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    errors = []
    for row in rows:
        path = out_dir / f"{row['id']}.json"
        path.write_text(json.dumps(config_for(row), indent=1) + "\n")
        result = subprocess.run([args.perflow, "simulate", str(path), "--format", "json"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"{row['id']}: perflow failed: {result.stderr.strip()}")
        report = json.loads(result.stdout)
        predicted = report["makespan_ns"] / 1e9
        measured = row["measured_iteration_s"]
        error = (predicted - measured) / measured
        errors.append(error)
        recompute = row["recompute"] + (" + SP" if row["sequence_parallel"] else "")
        lines.append(
            f"| {row['id']} | {row['gpus']} | {row['tp']} x {row['pp']} x {row['dp']} ({row['vp']}) "
            f"| {row['global_batch']} ({row['micro_batch']}) | {recompute} | {measured:.2f} s "
            f"| {predicted:.2f} s | {error * 100:+.1f}% |")
    # Within each model on the same GPUs, is the measured fastest run predicted fastest?
    groups = {}
    for row, error in zip(rows, errors):
        key = (json.dumps(row["model"], sort_keys=True), row["gpus"])
        predicted = row["measured_iteration_s"] * (1 + error)
        groups.setdefault(key, []).append((row["measured_iteration_s"], predicted, row["id"]))
    ranked = [g for g in groups.values() if len(g) > 1]
    first = sum(1 for g in ranked if min(g)[2] == min(g, key=lambda x: x[1])[2])
    mean_abs = sum(abs(e) for e in errors) / len(errors)
    multi = [e for e, row in zip(errors, rows) if row["gpus"] > 8]
    lines.append("")
    lines.append(f"Mean absolute error: {mean_abs * 100:.1f}% over {len(errors)} runs; "
                 f"{sum(abs(e) for e in multi) / len(multi) * 100:.1f}% over the "
                 f"{len(multi)} multi-node runs; worst {max(errors, key=abs) * 100:+.1f}%. "
                 f"The measured fastest of each model on the same GPUs is predicted fastest in "
                 f"{first} of {len(ranked)} comparisons.")
    text = "\n".join(lines) + "\n"
    write_or_check(text, args.write, args.check)

main()
