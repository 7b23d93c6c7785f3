#!/usr/bin/env bash
# The code snapshot's space and time (docs/runs.md "Snapshot"), on the real
# local Slurm cluster: a git repository of FILES files (SIZE_KB each, random,
# so nothing compresses) is submitted RUNS times (`submit --again`, held, then
# cancelled), every run of the same commit. Measured: the disk the runs folder
# takes (du), against the baseline of a copy per run (what a per-job rsync or
# `cp -r` snapshot takes: the work tree copied RUNS times, measured the same
# way); and the time of one submit with the snapshot against `--no-snapshot`.
# Needs: scripts/local-slurm up (22.05, or DDPCTL_SLURM_STATE for another),
# a built ddpctl in build/. Prints a Markdown table for bench/RESULTS.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddpctl=${DDPCTL:-$root/build/src/ddpctl}
L="$root/scripts/local-slurm"
FILES=${FILES:-2000}
SIZE_KB=${SIZE_KB:-10}
RUNS=${RUNS:-50}
work=$(mktemp -d /tmp/ddpctl-bench-snapshot.XXXXXX)
trap '"$L" exec -- scancel --name=bench-snapshot >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cd "$work"
mkdir repo && cd repo
git init -q . && git config user.email b@example.org && git config user.name bench
for d in $(seq 0 19); do mkdir -p "src/m$d"; done
for i in $(seq 1 "$FILES"); do head -c $((SIZE_KB * 1024)) /dev/urandom >"src/m$((i % 20))/f$i.py"; done
printf '#!/bin/bash\necho trained\n' >train.sh
chmod +x train.sh
echo "data/" >.gitignore
cat >job.yaml <<YAML
name: bench-snapshot
cluster: local
time: "00:05:00"
partition: cpu
gpus_per_node: 0
procs_per_node: 1
hold: true
command: [./train.sh]
YAML
git add -A && git commit -qm bench
export DDPCTL_RUNS="$work/runs"
tree_kb=$(du -sk --exclude=.git . | cut -f1)

now() { date +%s.%N; }
t0=$(now)
"$L" exec -- "$ddpctl" submit job.yaml >/dev/null
t1=$(now)
for _ in $(seq 2 "$RUNS"); do "$L" exec -- "$ddpctl" submit job.yaml --again >/dev/null; done
t2=$(now)
runs_kb=$(du -sk "$work/runs" | cut -f1)
snap_kb=$(du -sk "$work/runs/.snapshots" | cut -f1)
snapshots=$(find "$work/runs/.snapshots" -mindepth 1 -maxdepth 1 -type d | wc -l)
runs=$(find "$work/runs" -mindepth 1 -maxdepth 1 -type d -name 'bench-snapshot-*' | wc -l)
[ "$runs" -eq "$RUNS" ] || { echo "bench: $runs run folders, expected $RUNS" >&2; exit 1; }

# The baseline: a copy of the work tree per run.
t3=$(now)
for i in $(seq 1 "$RUNS"); do mkdir -p "$work/copies/$i" && cp -a --reflink=never src train.sh .gitignore job.yaml "$work/copies/$i/"; done
t4=$(now)
copies_kb=$(du -sk "$work/copies" | cut -f1)

# One submit's time, with and without the snapshot of a new state of the code.
echo "# changed" >>train.sh
t5=$(now)
"$L" exec -- "$ddpctl" submit job.yaml --again >/dev/null
t6=$(now)
"$L" exec -- "$ddpctl" submit job.yaml --again --no-snapshot >/dev/null
t7=$(now)

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
secs() { awk -v a="$1" -v b="$2" -v n="${3:-1}" 'BEGIN { printf "%.2f s", (b - a) / n }'; }
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ { print $2 }') GiB, $(uname -r); Slurm $(cat "${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}/slurm-version" 2>/dev/null || echo 22.05); $FILES files x $SIZE_KB KiB, $RUNS runs of one commit"
echo
echo "| what | ddpctl (content-addressed snapshots) | baseline: a copy per run | ratio |"
echo "|---|---:|---:|---:|"
echo "| the work tree (without .git) | $(mib "$tree_kb") | | |"
echo "| disk for $RUNS runs | $(mib "$runs_kb") ($snapshots snapshot folder(s): $(mib "$snap_kb"); records $(mib $((runs_kb - snap_kb)))) | $(mib "$copies_kb") | $(awk -v a="$runs_kb" -v b="$copies_kb" 'BEGIN { printf "%.3f", a / b }') |"
echo "| first submit (takes the snapshot) | $(secs "$t0" "$t1") | | |"
echo "| each later submit of the same commit | $(secs "$t1" "$t2" $((RUNS - 1))) | copy: $(secs "$t3" "$t4" "$RUNS") | |"
echo "| submit of a changed tree vs --no-snapshot | $(secs "$t5" "$t6") | $(secs "$t6" "$t7") | |"
