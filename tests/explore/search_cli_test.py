"""perflow search end to end: every plan it prints (best and Pareto) is a config that
`perflow simulate` reruns to the same numbers; -o equals --format json; --jobs does not
change a byte.

Usage: search_cli_test.py PERFLOW SOURCE_DIR
"""
import json
import os
import re
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

# --html: one self-contained page with the counts, both tables, the chart and the timeline.
with tempfile.TemporaryDirectory() as tmp:
    page_file = os.path.join(tmp, "report.html")
    run("search", search_file, "--jobs", "2", "--html", page_file)
    with open(page_file) as f:
        page = f.read()
    result = json.loads(printed)
    counts = (f"{result['considered']} plans considered, {result['pruned']} pruned "
              f"({result['pruned_divisibility']} by divisibility, {result['pruned_memory']} by "
              f"memory), {result['simulated']} simulated, {result['fit']} fit")
    check(counts in page, "the page's counts differ from the JSON's")
    check(page.count("<svg") == 2, "expected the Pareto chart and the timeline")
    check(page.count("<tr>") == 1 + len(result["best"]) + 1 + len(result["pareto"]) + 5,
          "expected a row per best plan, per Pareto plan and the breakdown's 5")
    links = set(re.findall(r"https?://[^\"'\s<>]*", page))
    check(links <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"},
          f"the page links {sorted(links)}")
    check("<script" not in page, "the page has a script")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
