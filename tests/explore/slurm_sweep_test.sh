#!/usr/bin/env bash
# A sweep as a Slurm job array on a real one-machine Slurm (docs/search-and-sweeps.md "Shards and Slurm"):
# munged, slurmctld and slurmd are started here with a minimal slurm.conf, a 4-task array
# is submitted with `sbatch --wait`, each task runs its shard (taken from the array's
# environment), and the merged result must equal the unsharded sweep byte for byte.
# Every daemon started here is stopped on exit. Needs root and Debian's slurm-wlm and munge
# (the test command installs them); exits 77 (skipped) without them.
# Usage: slurm_sweep_test.sh PERFLOW SWEEP
set -u
perflow=$(realpath "$1")
sweep=$(realpath "$2")
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "a one-machine Slurm needs root here"; exit 77; }

dir=$(mktemp -d /tmp/perflow-slurm.XXXXXX)
chmod 755 "$dir"
cleanup() {
  for pid_file in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    if [ -s "$pid_file" ]; then
      pid=$(cat "$pid_file")
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
    fi
  done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/*.log; do echo "== $log"; tail -20 "$log"; done
  exit 1
}

# munge: its own key, socket and files.
mkdir -p "$dir/munge" && chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge/munged.seed" || fail "munged did not start"

# Ports no other Slurm uses, chosen from the process id to let runs coexist.
port=$((20000 + $$ % 20000))
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$dir/state" "$dir/spool" "$dir/work"
cat >"$dir/slurm.conf" <<CONF
ClusterName=perflowtest
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 0.2
done
sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' || fail "the node did not come up"

cat >"$dir/work/array.sh" <<JOB
#!/bin/bash
"$perflow" sweep "$sweep" -o "$dir/work/part.\$SLURM_ARRAY_TASK_ID.csv" --jobs 1
JOB
chmod +x "$dir/work/array.sh"
cd "$dir/work" || fail "no work directory"
timeout 300 sbatch --wait --quiet --array=0-3 --cpus-per-task=1 --output="$dir/work/task.%a.log" \
  "$dir/work/array.sh" || fail "the job array failed: $(cat "$dir"/work/task.*.log 2>/dev/null)"

"$perflow" sweep --merge "$dir/work/merged.csv" "$dir"/work/part.*.csv >/dev/null ||
  fail "merge failed"
"$perflow" sweep "$sweep" -o "$dir/work/whole.csv" >/dev/null || fail "unsharded sweep failed"
cmp "$dir/work/merged.csv" "$dir/work/whole.csv" || fail "the merged array differs from the unsharded sweep"
parts=$(ls "$dir"/work/part.*.csv | wc -l)
[ "$parts" -eq 4 ] || fail "expected 4 shard files, got $parts"
echo "ok: 4 array tasks merged into the unsharded sweep ($(wc -l <"$dir/work/whole.csv") lines)"
