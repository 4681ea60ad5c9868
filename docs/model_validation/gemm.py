#!/usr/bin/env python3
"""The GEMM model (docs/model.md, "GEMM efficiency") against published GEMM benchmarks.

gemm_measurements.json holds measured TFLOP/s of GEMMs by shape (sources in
gemm_sources.md). For each library's rows on a GPU this prices every shape with
`perflow gemm` and tables the error. The model prices what Megatron-LM and Transformer
Engine call, cuBLAS(Lt): those rows are the check; DeepGEMM's and ThunderKittens' own
kernels are shown beside them. CUTLASS's Ampere-style kernels run on the H100 without its
Hopper instructions and are left out, as are grouped GEMMs (their m is per group) and
vLLM's DeepGEMM rows of February 2025 (70 us for any shape up to 64 x 7168 x 18432: the
timing holds host work).

Benchmarks run one GEMM back to back, warm; the presets' gemm_max is what training keeps
(0.88 of it on the A100, docs/model.md). This check prices at the benchmark level, fitted on
each GPU's cuBLAS rows (`--gemm-efficiency`): 0.75 on the A100 and on the H100.
What the table tests is the shape: tiles, waves, stream-K, the memory floor, the latency.

usage: gemm.py PERFLOW [--write FILE | --check FILE]
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys

from table_output import write_or_check

here = pathlib.Path(__file__).resolve().parent

# The GEMM benchmarks' level: gemm_max for each preset (docs/model.md, "GEMM efficiency").
BENCHMARK_GEMM_MAX = {"a100-80gb": 0.75, "h100-sxm": 0.75}
PRESET = {"a100-80gb": "a100-80gb", "a100-40gb": "a100-80gb", "h100-sxm": "h100-sxm",
          "h800": "h100-sxm"}


def checked(row):
    return "cuBLAS" in row["library"] or "cublas" in row["library"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("perflow")
    parser.add_argument("--write")
    parser.add_argument("--check")
    args = parser.parse_args()
    rows = [r for r in json.loads((here / "gemm_measurements.json").read_text())
            if r.get("kind", "dense") == "dense" and not r["library"].startswith("CUTLASS 2.x")
            and "(Feb 2025)" not in r["library"]]
    by_device = collections.defaultdict(list)
    for r in rows:
        by_device[(PRESET[r["gpu"]], r["dtype"])].append(r)
    for (device, dtype), group in sorted(by_device.items()):
        shapes = [f"{r['m']}x{r['n']}x{r['k']}" for r in group]
        result = subprocess.run(
            [args.perflow, "gemm", "--device", device, "--precision", dtype, "--format", "json",
             "--gemm-efficiency", str(BENCHMARK_GEMM_MAX[device]), *shapes],
            capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"perflow gemm failed: {result.stderr.strip()}")
        for r, g in zip(group, json.loads(result.stdout)["gemms"]):
            r["predicted"] = g["tflops"]
            r["error"] = (g["tflops"] - r["tflops"]) / r["tflops"]
    lines = ["| GPU | precision | library | rows | mean error | mean absolute error | worst |",
             "|---|---|---|---|---|---|---|"]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(PRESET[r["gpu"]], r["dtype"], r["library"])].append(r)
    for (device, dtype, library), group in sorted(groups.items(), key=lambda x: (
            not checked(x[1][0]), x[0])):
        errors = [r["error"] for r in group]
        lines.append(f"| {device} | {dtype} | {library}{'' if checked(group[0]) else ' (shown)'} "
                     f"| {len(group)} | {sum(errors) / len(errors) * 100:+.1f}% "
                     f"| {sum(map(abs, errors)) / len(errors) * 100:.1f}% "
                     f"| {max(errors, key=abs) * 100:+.0f}% |")
    lines.append("")
    # The micro-batch question: one layer's GEMM as its token count grows (vLLM's sweep).
    sweep = sorted({(r["m"], r["tflops"], r["predicted"]) for r in rows
                    if r["library"] == "torch BF16 linear -> cuBLAS"
                    and (r["n"], r["k"]) == (2112, 7168)})
    lines.append("H100 bf16, n 2112, k 7168 (vLLM's sweep of m): measured and predicted TFLOP/s")
    lines.append("")
    lines.append("| m | " + " | ".join(str(m) for m, _, _ in sweep) + " |")
    lines.append("|---|" + "---|" * len(sweep))
    lines.append("| measured | " + " | ".join(f"{t:.0f}" for _, t, _ in sweep) + " |")
    lines.append("| predicted | " + " | ".join(f"{p:.0f}" for _, _, p in sweep) + " |")
    lines.append("")
    cublas = [r["error"] for r in rows if checked(r)]
    large = [r["error"] for r in rows if checked(r) and r["m"] * r["n"] * r["k"] >= 1e9]
    lines.append(f"cuBLAS rows: mean absolute error {sum(map(abs, cublas)) / len(cublas) * 100:.1f}% "
                 f"over {len(cublas)}; {sum(map(abs, large)) / len(large) * 100:.1f}% over the "
                 f"{len(large)} with m n k >= 1e9.")
    text = "\n".join(lines) + "\n"
    write_or_check(text, args.write, args.check, "the GEMM table")

main()
