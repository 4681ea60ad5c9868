#!/usr/bin/env bash
# Output files: all or nothing, nothing left behind (docs/cli.md "Output files").
# Usage: outputs_test.sh CASE PERFLOW SOURCE_DIR
#   all_or_nothing  a failing output leaves every old output of the command untouched
#   signals         SIGINT, SIGTERM, SIGHUP while writing remove the temporaries
#   killed          a SIGKILL's temporaries are removed (and told) by the next run
#   symlinks        a dangling link creates its target, a loop is an error
#   read_only       a read-only output is refused without --force
#   empty_path      an empty output path, or a directory, is an error
#   special_inputs  plot and costs refuse a FIFO, a device, a directory, quickly
# Exits 77 (skipped) when a device it needs is missing.
set -u
set -m  # job control: background runs keep SIGINT (a script's background jobs ignore it)
case_name=$1
perflow=$2
source_dir=$3
config=$source_dir/examples/1f1b.json
search=$source_dir/tests/golden/search_json/search.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect CODE STDERR_LINE -- COMMAND...: runs it, checks its exit code and its whole stderr.
expect() {
  local code=$1 message=$2
  shift 3
  "$@" >out.txt 2>err.txt
  local actual=$?
  local stderr
  stderr=$(cat err.txt)
  [ "$actual" = "$code" ] || fail "$*: exit $actual, expected $code (stderr: $stderr)"
  [ "$stderr" = "$message" ] || fail "$*: stderr '$stderr', expected '$message'"
}

# No temporary of any run is left in the working directory.
no_temporaries() {
  local left
  left=$(find . -name '*.perflow-tmp-*' -o -name '*.tmp[0-9]*' | sort | tr '\n' ' ')
  [ -z "$left" ] || fail "$1: temporaries left: $left"
}

# Waits (at most 60 s) until a file matching the glob exists.
wait_for() {
  local i
  for ((i = 0; i < 600; ++i)); do
    compgen -G "$1" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# A run blocked on its last output: --chrome-trace is a FIFO nobody reads, written in place
# after the --report temporary is complete. Sets run_pid.
start_blocked_run() {
  rm -f fifo.json
  mkfifo fifo.json
  # The default actions, whatever this test inherited (a background ctest ignores SIGINT).
  env --default-signal=HUP,INT,TERM \
    "$perflow" simulate "$config" --report r.json --chrome-trace fifo.json >/dev/null 2>run.err &
  run_pid=$!
}

# Waits (at most 60 s) for the run to end and sets run_code; kills a run that does not end.
wait_run() {
  local i
  for ((i = 0; i < 600; ++i)); do
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -s KILL "$run_pid" 2>/dev/null && fail "the run did not end"
  wait "$run_pid"
  run_code=$?
}

case $case_name in
  all_or_nothing)
    [ -c /dev/full ] || { echo "/dev/full is not a character device here"; exit 77; }
    echo old >keep.json
    expect 4 "perflow: error: cannot write '/dev/full': No space left on device" -- \
      "$perflow" search "$search" --jobs 2 -o keep.json --html /dev/full
    [ "$(cat keep.json)" = old ] || fail "search replaced keep.json"
    expect 4 "perflow: error: cannot write '/dev/full': No space left on device" -- \
      "$perflow" simulate "$config" --report keep.json --chrome-trace /dev/full
    [ "$(cat keep.json)" = old ] || fail "simulate replaced keep.json"
    no_temporaries "a failed write"
    ;;

  signals)
    for signal in INT TERM HUP; do
      echo old >r.json
      start_blocked_run
      pid=$run_pid
      wait_for "r.json.perflow-tmp-*" || fail "SIG$signal: no temporary appeared"
      kill -s "$signal" "$pid"
      wait_run
      code=$run_code
      expected=$((128 + $(kill -l "$signal")))
      [ "$code" = "$expected" ] || fail "SIG$signal: exit $code, expected $expected"
      [ "$(cat r.json)" = old ] || fail "SIG$signal: r.json was replaced"
      no_temporaries "SIG$signal"
    done
    ;;

  killed)
    start_blocked_run
    pid=$run_pid
    wait_for "r.json.perflow-tmp-*" || fail "no temporary appeared"
    kill -s KILL "$pid"
    wait_run
    leftover=$(compgen -G "r.json.perflow-tmp-*-$pid-*")
    [ -n "$leftover" ] || fail "SIGKILL left no recognisable temporary"
    expect 0 "perflow: removed 1 temporary file that an interrupted run left in '.': $leftover" \
      -- "$perflow" simulate "$config" --report r.json
    [ -s r.json ] || fail "the next run wrote no report"
    no_temporaries "the next run"
    ;;

  symlinks)
    ln -s target.json dangling.json
    expect 2 "perflow: error: --report 'dangling.json' and --chrome-trace 'target.json' are the same file; give each output its own" \
      -- "$perflow" simulate "$config" --report dangling.json --chrome-trace target.json
    expect 0 "" -- "$perflow" simulate "$config" --report dangling.json
    [ -L dangling.json ] || fail "the dangling link was replaced"
    [ -s target.json ] || fail "the dangling link's target was not written"
    ln -s target.svg dangling.svg
    expect 0 "" -- "$perflow" compare "$config" "$config" -o dangling.svg
    [ -L dangling.svg ] && [ -s target.svg ] || fail "compare did not write through the link"
    ln -s loop-b.json loop-a.json
    ln -s loop-a.json loop-b.json
    expect 4 "perflow: error: cannot write 'loop-a.json': it is a symlink loop" -- \
      "$perflow" simulate "$config" --report loop-a.json
    expect 4 "perflow: error: cannot write 'loop-a.json': it is a symlink loop" -- \
      "$perflow" search "$search" --jobs 2 -o loop-a.json
    [ -L loop-a.json ] && [ -L loop-b.json ] || fail "a link of the loop was replaced"
    no_temporaries "symlinks"
    ;;

  read_only)
    echo old >r.json
    chmod 0444 r.json
    expect 2 "perflow: error: --report 'r.json' is read-only; refusing to replace it (--force replaces it)" \
      -- "$perflow" simulate "$config" --report r.json
    [ "$(cat r.json)" = old ] || fail "the read-only report was replaced"
    ln -s r.json link.json
    expect 2 "perflow: error: -o 'link.json' is read-only; refusing to replace it (--force replaces it)" \
      -- "$perflow" search "$search" --jobs 2 -o link.json
    expect 0 "" -- "$perflow" simulate "$config" --report r.json --force
    [ "$(head -c 1 r.json)" = "{" ] || fail "--force did not replace the read-only report"
    ;;

  empty_path)
    for option in --report --timeline --svg --chrome-trace --trace; do
      expect 2 "perflow: error: $option: an empty path names no file (run 'perflow --help')" -- \
        "$perflow" simulate "$config" "$option" ''
    done
    expect 2 "perflow: error: --html: an empty path names no file (run 'perflow --help')" -- \
      "$perflow" search "$search" --html ''
    expect 2 "perflow: error: --output: an empty path names no file (run 'perflow --help')" -- \
      "$perflow" compare "$config" -o ''
    expect 2 "perflow: error: --report '.' is a directory; name a file to write" -- \
      "$perflow" simulate "$config" --report .
    ;;

  special_inputs)
    mkfifo results.csv
    # timeout: today's plot blocks forever opening the FIFO.
    expect 2 "perflow: error: results.csv: is a FIFO, not a CSV file" -- \
      timeout 60 "$perflow" plot results.csv --x a --y b -o chart.svg
    [ -c /dev/zero ] || { echo "/dev/zero is not a character device here"; exit 77; }
    expect 2 "perflow: error: /dev/zero: is a character device, not a CSV file" -- \
      timeout 60 "$perflow" plot /dev/zero --x a --y b -o chart.svg
    [ -e chart.svg ] && fail "plot wrote a chart"
    ;;

  *)
    echo "unknown case '$case_name'"
    exit 2
    ;;
esac

if [ "$failures" != 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "ok: $case_name"
