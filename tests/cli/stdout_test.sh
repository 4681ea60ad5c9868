#!/usr/bin/env bash
# Standard output that cannot be written is exit code 4 with a message (docs/cli.md "Exit codes").
# Usage: stdout_test.sh full|pipe PERFLOW CONFIG
#   full: standard output is /dev/full (a full disk)
#   pipe: standard output is a pipe its reader closes early (`| head -c 10`); CONFIG's report
#         must be larger than a pipe's buffer
# Exits 77 (skipped) when /dev/full is not a character device.
set -u
mode=$1
perflow=$2
config=$3
stderr_file=$(mktemp)
trap 'rm -f "$stderr_file"' EXIT

case $mode in
  full)
    [ -c /dev/full ] || { echo "/dev/full is not a character device here"; exit 77; }
    "$perflow" simulate "$config" --format json >/dev/full 2>"$stderr_file"
    code=$?
    expected="perflow: error: cannot write to standard output: No space left on device"
    ;;
  pipe)
    "$perflow" simulate "$config" --format json 2>"$stderr_file" | head -c 10 >/dev/null
    code=${PIPESTATUS[0]}
    expected="perflow: error: cannot write to standard output: Broken pipe"
    ;;
  *)
    echo "unknown mode '$mode'"
    exit 2
    ;;
esac

actual=$(cat "$stderr_file")
if [ "$code" != 4 ] || [ "$actual" != "$expected" ]; then
  echo "expected exit 4 and: $expected"
  echo "got exit $code and: $actual"
  exit 1
fi
echo "exit 4: $actual"
