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
    try:
        result = subprocess.run([perflow, *args], capture_output=True, text=True, env=env,
                                timeout=120, errors="replace")
    except subprocess.TimeoutExpired:
        raise SystemExit(f"perflow {' '.join(args)}: still running after 120 s")
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

# Issue 35: a sweep never keeps a wrong row.
with tempfile.TemporaryDirectory() as tmp:
    out = lambda name: os.path.join(tmp, name)
    with open(sweep_file) as f:
        document = json.load(f)
    document["base"] = os.path.join(source, "examples", "1f1b.json")
    with open(out("a.json"), "w") as f:
        json.dump(document, f)
    # The same axes, other microbatches: rows that look alike.
    document["axes"]["/pipeline/microbatches"] = {"from": 9, "to": 33, "step": 12}
    with open(out("b.json"), "w") as f:
        json.dump(document, f)
    # The same axes and values over another base.
    with open(os.path.join(source, "examples", "1f1b.json")) as f:
        base = json.load(f)
    base["costs"]["forward"] = base["costs"].get("forward", 1) * 2
    with open(out("base2.json"), "w") as f:
        json.dump(base, f)
    document["axes"]["/pipeline/microbatches"] = {"from": 8, "to": 32, "step": 12}
    document["base"] = out("base2.json")
    with open(out("c.json"), "w") as f:
        json.dump(document, f)

    run("sweep", out("a.json"), "-o", out("whole.csv"), "--jsonl", out("whole.jsonl"))
    whole_csv, whole_jsonl = read(out("whole.csv")), read(out("whole.jsonl"))
    identity = json.loads(read(out("whole.csv.identity.json")))
    check(identity["perflow"] == "sweep results" and identity["runs"] == 24 and
          identity["shard"] == "0/1" and identity["format"] == "csv" and
          identity["sweep"].startswith("sha256:"), f"identity: {identity}")
    for name, opt in (("csv", "-o"), ("jsonl", "--jsonl")):
        run("sweep", out("a.json"), opt, out(f"a0.{name}"), "--shard", "0/2")
        run("sweep", out("a.json"), opt, out(f"a1.{name}"), "--shard", "1/2")
        run("sweep", out("b.json"), opt, out(f"b1.{name}"), "--shard", "1/2")
        run("sweep", "--merge", out(f"m.{name}"), out(f"a1.{name}"), out(f"a0.{name}"))
        check(read(out(f"m.{name}")) == read(out(f"whole.{name}")), f"merged {name} != whole")
        check(read(out(f"m.{name}.identity.json")) == read(out(f"whole.{name}.identity.json")),
              f"merged {name}'s identity != the unsharded one's")
        # Shards of two sweeps: refused, nothing written.
        mixed = run("sweep", "--merge", out(f"x.{name}"), out(f"a0.{name}"), out(f"b1.{name}"),
                    expect=2)
        check(f"hold results of different sweeps" in mixed.stderr and
              out(f"b1.{name}") in mixed.stderr, f"mixed shards: {mixed.stderr!r}")
        check(not os.path.exists(out(f"x.{name}")), "a refused merge wrote its output")
        missing = run("sweep", "--merge", out(f"x.{name}"), out(f"a0.{name}"), expect=2)
        check("shard 1/2 (runs 12 to 23) is in none of the parts" in missing.stderr,
              f"missing shard: {missing.stderr!r}")
        twice = run("sweep", "--merge", out(f"x.{name}"), out(f"a0.{name}"), out(f"a1.{name}"),
                    out(f"a1.{name}"), expect=2)
        check("are both shard 1/2" in twice.stderr, f"repeated shard: {twice.stderr!r}")

    # Malformed rows: an error naming file, line and field for merge; run again on resume,
    # to the clean run's bytes.
    lines = whole_csv.split(b"\n")
    row = lines[5]  # run 4
    fields = row.split(b",")
    edits = {
        "11 fields": b",".join(fields[:-2] + fields[-1:]),
        "fal2e": row.replace(b"false", b"fal2e"),
        "NUL": row.replace(fields[5], fields[5][:2] + b"\0" + fields[5][2:]),
        "0xff": row.replace(fields[5], fields[5][:2] + b"\xff" + fields[5][2:]),
        "quote": row.replace(fields[5], fields[5][:2] + b'"' + fields[5][2:]),
    }
    for what, edited in edits.items():
        text = b"\n".join(lines[:5] + [edited] + lines[6:])
        with open(out("e.csv"), "wb") as f:
            f.write(text)
        bad = run("sweep", "--merge", out("x.csv"), out("e.csv"), expect=2)
        check(f"e.csv:line 6: " in bad.stderr and "of run 4" in bad.stderr,
              f"merge of a row with {what}: {bad.stderr!r}")
        with open(out("e.csv.identity.json"), "wb") as f:
            f.write(read(out("whole.csv.identity.json")))
        resumed = run("sweep", out("a.json"), "-o", out("e.csv"))
        check(read(out("e.csv")) == whole_csv, f"resumed over a row with {what} differs")
        check(", 4 already in " in resumed.stdout and "line 6" in resumed.stderr,
              f"resume over a row with {what}: {resumed.stdout!r} {resumed.stderr!r}")
        os.remove(out("e.csv.identity.json"))
    jsonl_lines = whole_jsonl.split(b"\n")
    jsonl_lines[4] = jsonl_lines[4].replace(b'"peak_memory"', b'"peax_memory"')
    with open(out("e.jsonl"), "wb") as f:
        f.write(b"\n".join(jsonl_lines))
    bad = run("sweep", "--merge", out("x.jsonl"), out("e.jsonl"), expect=2)
    check("e.jsonl:line 5: the row of run 4: expected key 'peak_memory', found 'peax_memory'"
          in bad.stderr, f"merge of a renamed key: {bad.stderr!r}")
    run("sweep", out("a.json"), "--jsonl", out("e.jsonl"))
    check(read(out("e.jsonl")) == whole_jsonl, "resumed over a renamed key differs")

    # Another base under the same axes: its identity tells.
    other = run("sweep", out("c.json"), "-o", out("whole.csv"), expect=2)
    check("holds the results of another sweep (" in other.stderr, f"other base: {other.stderr!r}")
    check(read(out("whole.csv")) == whole_csv, "another base's resume changed the file")

    # What is not a regular file is refused, at once.
    os.mkfifo(out("fifo.csv"))
    os.symlink("/dev/zero", out("zero.csv"))
    for path, kind in (("/dev/zero", "a character device"), (out("fifo.csv"), "a FIFO"),
                       (out("zero.csv"), "a character device"), (tmp, "a directory")):
        merged = run("sweep", "--merge", out("x.csv"), out("a0.csv"), path, expect=2)
        check(f"{path}: is {kind}, not a sweep results file" in merged.stderr,
              f"--merge {path}: {merged.stderr!r}")
    for path, kind in ((out("fifo.csv"), "a FIFO"), (out("zero.csv"), "a character device")):
        resumed = run("sweep", out("a.json"), "-o", path, expect=2)
        check(f"{path}: is {kind}, not a sweep results file" in resumed.stderr,
              f"-o {path}: {resumed.stderr!r}")

for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
