"""perflow search end to end: every plan it prints (best and Pareto) is a config that
`perflow simulate` reruns to the same numbers; -o equals --format json; --jobs does not
change a byte.

Usage: search_cli_test.py PERFLOW SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

perflow, source = sys.argv[1], sys.argv[2]
search_file = os.path.join(source, "examples", "search_llama3_70b.json")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args):
    result = subprocess.run([perflow, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"perflow {' '.join(args)}: exit {result.returncode}\n{result.stderr}")
    return result.stdout


with tempfile.TemporaryDirectory() as tmp:
    plans_file = os.path.join(tmp, "plans.json")
    printed = run("search", search_file, "--format", "json", "--jobs", "2", "-o", plans_file)
    with open(plans_file) as f:
        written = f.read()
    check(printed == written, "-o differs from --format json")
    check(run("search", search_file, "--format", "json", "--jobs", "1") == printed,
          "--jobs 1 differs from --jobs 2")
    result = json.loads(written)
    check(result["considered"] == result["pruned"] + result["simulated"],
          "considered != pruned + simulated")
    check(len(result["best"]) == 5, f"expected top 5, got {len(result['best'])}")
    for kind in ("best", "pareto"):
        for plan in result[kind]:
            config = os.path.join(tmp, "plan.json")
            with open(config, "w") as f:
                json.dump(plan["config"], f)
            report = json.loads(run("simulate", config, "--format", "json"))
            for key in ("makespan_ns", "tokens_per_s", "mfu"):
                check(report[key] == plan[key],
                      f"{kind} plan {plan['rank']}: {key} {report[key]} != {plan[key]}")
            peak = max(d["peak_total_memory"] for d in report["devices"])
            check(peak == plan["peak_total_memory"],
                  f"{kind} plan {plan['rank']}: peak memory {peak} != {plan['peak_total_memory']}")
            check(not report["out_of_memory"], f"{kind} plan {plan['rank']} is out of memory")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
