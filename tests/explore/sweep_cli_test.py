"""perflow sweep end to end: rows equal single `perflow simulate` runs, shards (by --shard
and by a Slurm job array's environment) merge into the unsharded file, an interrupted sweep
resumes to the uninterrupted result, and --jobs does not change a byte.

Usage: sweep_cli_test.py PERFLOW SOURCE_DIR
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

perflow, source = sys.argv[1], sys.argv[2]
sweep_file = os.path.join(source, "examples", "sweep_schedules.json")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args, env=None, expect=0):
    result = subprocess.run([perflow, *args], capture_output=True, text=True, env=env)
    if result.returncode != expect:
        raise SystemExit(f"perflow {' '.join(args)}: exit {result.returncode}\n{result.stderr}")
    return result


def read(path):
    with open(path, "rb") as f:
        return f.read()


with tempfile.TemporaryDirectory() as tmp:
    out = lambda name: os.path.join(tmp, name)

    # The whole sweep, one thread and two.
    run("sweep", sweep_file, "-o", out("one.csv"), "--jsonl", out("one.jsonl"), "--jobs", "1")
    run("sweep", sweep_file, "-o", out("two.csv"), "--jsonl", out("two.jsonl"), "--jobs", "2")
    whole_csv, whole_jsonl = read(out("one.csv")), read(out("one.jsonl"))
    check(read(out("two.csv")) == whole_csv, "--jobs 2 CSV differs from --jobs 1")
    check(read(out("two.jsonl")) == whole_jsonl, "--jobs 2 JSON Lines differ from --jobs 1")
    check(run("sweep", sweep_file, "--jobs", "2").stdout.encode() == whole_csv,
          "the CSV on standard output differs from -o's")

    # Every row is what `perflow simulate` of that config says.
    rows = list(csv.DictReader(io.StringIO(whole_csv.decode())))
    lines = [json.loads(line) for line in whole_jsonl.decode().splitlines()]
    check(len(rows) == 24 and len(lines) == 24, f"expected 24 runs, got {len(rows)}, {len(lines)}")
    base = os.path.join(source, "examples", "1f1b.json")
    axes = ["/pipeline/schedule", "/pipeline/chunks", "/pipeline/stages", "/pipeline/microbatches"]
    simulated = 0
    for row, line in zip(rows, lines):
        sets = []
        for axis in axes:
            sets += ["--set", f"{axis}={json.dumps(line[axis])}"]
        alone = subprocess.run([perflow, "simulate", base, *sets, "--format", "json"],
                               capture_output=True, text=True)
        if alone.returncode != 0:
            check(line["error"] is not None and row["error"] != "",
                  f"run {row['run']}: simulate failed but the sweep has no error")
            message = alone.stderr.strip().removeprefix("perflow: error: ")
            check(line["error"] == message.replace("--set", "the sweep axis"),
                  f"run {row['run']}: error {line['error']!r} != {message!r}")
            continue
        simulated += 1
        report = json.loads(alone.stdout)
        devices = report["devices"]
        expected = {
            "makespan_ns": report["makespan_ns"],
            "bubble_ratio": report["bubble_ratio"],
            "tokens_per_s": report["tokens_per_s"],
            "mfu": report["mfu"],
            "peak_memory": max(d["peak_memory"] for d in devices),
            "peak_total_memory": max(d["peak_total_memory"] for d in devices),
            "out_of_memory": report["out_of_memory"],
            "error": None,
        }
        for key, value in expected.items():
            check(line[key] == value, f"run {row['run']}: {key} {line[key]!r} != {value!r}")
        check(row["makespan_ns"] == str(report["makespan_ns"]), f"run {row['run']}: CSV makespan")
    check(simulated == 23, f"expected 23 runs to simulate (interleaved-1f1b refuses 20 microbatches on 8 stages), {simulated} did")

    # Shards, by option and by a Slurm job array, merge into the unsharded file.
    for name, fmt in (("csv", "-o"), ("jsonl", "--jsonl")):
        parts = []
        for i in range(3):
            parts.append(out(f"opt{i}.{name}"))
            run("sweep", sweep_file, fmt, parts[-1], "--shard", f"{i}/3")
        run("sweep", "--merge", out(f"merged.{name}"), *reversed(parts))
        whole = whole_csv if name == "csv" else whole_jsonl
        check(read(out(f"merged.{name}")) == whole, f"merged --shard {name} != unsharded")
        slurm = []
        for task in (5, 6, 7, 8):  # --array=5-8
            env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN="5",
                       SLURM_ARRAY_TASK_COUNT="4")
            slurm.append(out(f"slurm{task}.{name}"))
            run("sweep", sweep_file, fmt, slurm[-1], env=env)
        run("sweep", "--merge", out(f"slurm.{name}"), *slurm)
        check(read(out(f"slurm.{name}")) == whole, f"merged Slurm shards {name} != unsharded")

    # A sweep cut off anywhere resumes to the uninterrupted file.
    for cut in (0, 5, len(whole_csv) // 3, len(whole_csv) // 2 + 7, len(whole_csv) - 1):
        with open(out("cut.csv"), "wb") as f:
            f.write(whole_csv[:cut])
        run("sweep", sweep_file, "-o", out("cut.csv"), "--jobs", "2")
        check(read(out("cut.csv")) == whole_csv, f"resumed after byte {cut} differs")
    # Two outputs cut at different rows resume from the shorter.
    with open(out("a.csv"), "wb") as f:
        f.write(whole_csv[: len(whole_csv) // 2])
    with open(out("a.jsonl"), "wb") as f:
        f.write(whole_jsonl[: len(whole_jsonl) // 4])
    summary = run("sweep", sweep_file, "-o", out("a.csv"), "--jsonl", out("a.jsonl")).stdout
    check(read(out("a.csv")) == whole_csv and read(out("a.jsonl")) == whole_jsonl,
          "two outputs resumed differ")
    check(", 6 already in " in summary, f"summary: {summary!r}")
    # Nothing left to run: nothing changes.
    again = run("sweep", sweep_file, "-o", out("a.csv")).stdout
    check("24 already in" in again and read(out("a.csv")) == whole_csv, f"rerun: {again!r}")
    # Another sweep's file is not appended to.
    with open(out("other.csv"), "wb") as f:
        f.write(b"run,/x,makespan_ns\n")
    other = run("sweep", sweep_file, "-o", out("other.csv"), expect=2)
    check("holds the results of another sweep" in other.stderr, other.stderr)
    check(read(out("other.csv")) == b"run,/x,makespan_ns\n", "another sweep's file was changed")

for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
