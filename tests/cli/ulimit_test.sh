#!/usr/bin/env bash
# A run too large for `ulimit -v` is refused before it allocates: exit code 5 and a message
# with the estimate and the limit (docs/cli.md "Exit codes"), never the kernel's OOM killer.
# Usage: ulimit_test.sh PERFLOW
set -u
perflow=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/huge.json" <<'JSON'
{
  "pipeline": {"schedule": "1f1b", "stages": 1024, "microbatches": 65536},
  "costs": {"forward": 10, "backward": 20, "weight": 15}
}
JSON
(ulimit -v 1000000 && "$perflow" simulate "$dir/huge.json" >"$dir/stdout" 2>"$dir/stderr")
code=$?
expected="perflow: error: $dir/huge.json: this run would need about 9.7GB of memory (planning up to 201326592 tasks), more than the"
if [ "$code" -ne 5 ] || ! grep -qF -- "$expected" "$dir/stderr" || ! grep -qF "(ulimit -v)" "$dir/stderr" || [ -s "$dir/stdout" ]; then
  echo "expected exit code 5 and: $expected ... (ulimit -v)"
  echo "got exit code $code, stderr:"
  cat "$dir/stderr"
  exit 1
fi
