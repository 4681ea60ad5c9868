"""Issue 14's CLI check: `perflow simulate` end to end, as a user runs it.

Times the whole command (process start, config, plan, build, simulate, summary) on 1F1B
128 stages x 4096 microbatches (1,048,576 tasks; the costs and 1 us link latency of
bench/pipeline_bench.cpp), with no output file and with `--report`, and a 4-stage config
for the cost of starting the process. Prints the median wall and CPU time (user + system,
from the child's rusage) of REPETITIONS runs after one warm-up, and tasks per second. A
measurement, not a test: it fails only if the command does.

Run (make bench does): python3 bench/cli_speed.py build/release/perflow
"""
import json
import os
import statistics
import sys
import tempfile
import time

REPETITIONS = 9
TASKS = 128 * 4096 * 2

BIG = {
    "pipeline": {"schedule": "1f1b", "stages": 128, "microbatches": 4096, "chunks": 1},
    "costs": {"forward": 1315000, "backward": 2733000, "weight": 2650000, "activation": 1},
    "network": {"p2p_latency": "1us"},
}
SMALL = {
    "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8, "chunks": 1},
    "costs": {"forward": 1315, "backward": 2733, "weight": 2650, "activation": 1},
}


def run_once(argv):
    """Wall and CPU nanoseconds of one run, its stdout discarded."""
    start = time.perf_counter_ns()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter_ns() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"cli_speed: {' '.join(argv)} failed ({status})")
    return wall, round((usage.ru_utime + usage.ru_stime) * 1e9)


def measure(argv):
    run_once(argv)  # warm-up: the binary and the config in the page cache
    runs = [run_once(argv) for _ in range(REPETITIONS)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: cli_speed.py PATH/TO/perflow")
    perflow = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "1f1b_128x4096.json")
        small = os.path.join(tmp, "1f1b_4x8.json")
        report = os.path.join(tmp, "report.json")
        for path, config in ((big, BIG), (small, SMALL)):
            with open(path, "w", encoding="utf-8") as out:
                json.dump(config, out)
        rows = [
            ("1F1B 128 x 4096, no outputs", [perflow, "simulate", big], TASKS),
            ("same with --report", [perflow, "simulate", big, "--report", report], TASKS),
            ("1F1B 4 x 8 (process start)", [perflow, "simulate", small], 64),
        ]
        print(f"perflow simulate, median of {REPETITIONS} runs after a warm-up:")
        for name, argv, tasks in rows:
            wall, cpu = measure(argv)
            size = f", report {os.path.getsize(report) / 1e6:.1f} MB" if "--report" in argv else ""
            print(f"  {name:30} {wall / 1e6:7.1f} ms wall {cpu / 1e6:7.1f} ms CPU "
                  f"{tasks / wall * 1e3:6.2f}M tasks/s{size}")


if __name__ == "__main__":
    main()
