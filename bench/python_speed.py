"""Issue 19's speed check: a 1M-task 1F1B from Python against the C++ benchmark.

Times perflow.build_schedule(...).simulate(...) on 1F1B 128 stages x 4096 microbatches
(1,048,576 tasks; the costs and 1 us link latency of bench/pipeline_bench.cpp) and compares
the median with perflow_bench's BM_EndToEnd/1f1b/128/4096, which builds and simulates the
same graph in C++. The two take turns for ROUNDS rounds and each keeps its best median:
this machine's speed drifts within minutes, so one pass each compared the drift as much as
the languages. Fails (exit 1) when Python is more than 10% slower.

Run (make bench does): PYTHONPATH=build/release/python python3 bench/python_speed.py \
    build/release/bench/perflow_bench
"""
import json
import statistics
import subprocess
import sys
import time

import perflow

REPETITIONS = 5
ROUNDS = 3
LIMIT = 1.10


def cpp_median_ns(bench):
    out = subprocess.run(
        [bench, "--benchmark_filter=^BM_EndToEnd/1f1b/128/4096$",
         f"--benchmark_repetitions={REPETITIONS}", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            assert b["time_unit"] == "ms", b["time_unit"]
            return b["real_time"] * 1e6
    raise SystemExit("python_speed: no median of BM_EndToEnd/1f1b/128/4096 in the output")


def python_median_ns():
    costs = perflow.TaskCosts(forward=1_315_000, backward=2_733_000, weight=2_650_000,
                              activation=1.0)
    times = []
    for _ in range(REPETITIONS + 1):  # the first warms up (page faults, caches)
        start = time.perf_counter_ns()
        run = perflow.build_schedule("1f1b", stages=128, microbatches=4096,
                                     costs=costs).simulate(p2p_latency=1000)
        times.append(time.perf_counter_ns() - start)
        assert run.graph.task_count == 1_048_576
        del run
    return statistics.median(times[1:])


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: python_speed.py PATH/TO/perflow_bench")
    cpp = python = float("inf")
    for _ in range(ROUNDS):
        cpp = min(cpp, cpp_median_ns(sys.argv[1]))
        python = min(python, python_median_ns())
    ratio = python / cpp
    print(f"1F1B 128 x 4096 (1,048,576 tasks), build + simulate, best of {ROUNDS} medians of "
          f"{REPETITIONS}:")
    print(f"  C++ BM_EndToEnd  {cpp / 1e6:8.1f} ms  {1_048_576 / cpp * 1e3:6.2f}M tasks/s")
    print(f"  Python           {python / 1e6:8.1f} ms  {1_048_576 / python * 1e3:6.2f}M tasks/s")
    print(f"  Python / C++     {ratio:8.3f}  (limit {LIMIT})")
    if ratio > LIMIT:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
