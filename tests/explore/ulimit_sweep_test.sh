#!/usr/bin/env bash
# Under `ulimit -v`, a sweep on 2 threads writes what it writes on 1 (issue 35): a run that
# does not fit beside the other run waits and runs alone instead of becoming an "invalid"
# row. Runs of about 600 MB (estimated) under a 1 GB address-space limit: one fits, two do not.
# Usage: ulimit_sweep_test.sh PERFLOW
set -u
perflow=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/sweep.json" <<'JSON'
{
  "base": {"pipeline": {"schedule": "1f1b", "stages": 64, "microbatches": 36864},
           "costs": {"forward": 10, "backward": 20, "weight": 15}},
  "axes": {"/pipeline/microbatches": [36864, 12000, 36864, 24000, 36864, 12000, 30000, 36864]}
}
JSON
fail=0
for jobs in 1 2; do
  (ulimit -v 1000000 && "$perflow" sweep "$dir/sweep.json" --jobs $jobs -o "$dir/j$jobs.csv" \
    >"$dir/stdout$jobs" 2>"$dir/stderr$jobs")
  code=$?
  if [ "$code" -ne 0 ] || ! grep -qF "ran 8: 8 simulated, 0 invalid" "$dir/stdout$jobs"; then
    echo "--jobs $jobs: expected exit code 0 and 8 runs simulated, got exit code $code:"
    cat "$dir/stdout$jobs" "$dir/stderr$jobs"
    fail=1
  fi
done
if ! cmp -s "$dir/j1.csv" "$dir/j2.csv"; then
  echo "--jobs 2 wrote other rows than --jobs 1:"
  diff "$dir/j1.csv" "$dir/j2.csv"
  fail=1
fi
exit $fail
