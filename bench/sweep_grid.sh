#!/usr/bin/env bash
# A 200-cell grid (issue 38): one job array made by `ddpctl sweep` against
# the same 200 cells submitted the way users do it today, a shell loop of
# 200 `ddpctl submit spec.yaml --set env.LR=... --set env.SEED=...`, both in
# this one run on the real local Slurm (SLURM, default 24.11; 22.05 and 26.05
# work the same).
#
# The cells: env.LR (20 values) x env.SEED (10 values), one node, one CPU
# rank, a command that only sleeps, all submitted held (the spec's
# `hold: true`), so nothing runs or ends while measuring; the script checks
# that squeue shows every array task and every loop job as JobHeldUser.
# Both sides run ddpctl as a user would: with the cluster preflight and the
# run records, from the login host. Measured:
#   submit       sbatch calls, all Slurm calls, wall time: the sweep's median
#                of REPS (default 3) sweeps (each in a runs folder of its
#                own; the extra ones are cancelled at once); the loop once
#                (200 submits; one more would be 200 more jobs). Both timed
#                with the counting wrappers in place (a shell exec per call).
#   status       `status SWEEP` (a row per cell, 200 rows) and `status` (the
#                sweep in one line) against `status` over the loop's 200 runs
#                (200 rows): median wall time of REPS refreshes, and the
#                Slurm calls of one more refresh, counted by wrappers first
#                on PATH that log and exec the real command. Both sides are
#                measured with all 400 held jobs in the queue.
# Ratios are this / loop (below 1: the grid costs less).
#
# The local cluster's limits (read with `scontrol show config` and
# `sacctmgr show qos` / `show assoc`): MaxArraySize 1001 (a 200-task array
# fits), MaxJobCount 10000 (the 400 jobs and REPS-1 extra arrays fit),
# MinJobAge 300 s, and no MaxSubmitJobs / MaxJobs on the QOS `normal` nor on
# any association, so neither side is refused. A site's MaxSubmitJobs counts
# an array's tasks one by one (slurmctld's acct_policy_validate counts the
# array's task bitmap), so an array does not save entries against it;
# what it saves are sbatch calls and the queue's records (one collapsed
# pending record). The script prints the limits it finds.
#
# Every job made here is cancelled on exit (also on INT/TERM) by the ids in
# the run records and by the bench's job names, and the script checks that
# squeue shows none of them left pending or running. Ctrl-C and timeout(1)
# signal the whole process group and stop it at once; a TERM to this shell
# alone takes effect when its running command returns (the loop of submits:
# about a minute).
# Prints the table for bench/RESULTS.md. As root (local-slurm); it takes the
# cluster's lock itself (/tmp/ddpctl-slurm-$SLURM.lock), waiting while a test
# holds it:
#   bench/sweep_grid.sh
#   SLURM=22.05 REPS=5 bench/sweep_grid.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DDPCTL=${DDPCTL:-$root/build/src/ddpctl}
SLURM=${SLURM:-24.11}
REPS=${REPS:-3}
ls="$root/scripts/local-slurm"
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
# Tests and other benches share the cluster: the whole bench, its cleanup
# included, runs under the cluster's lock, held on fd 9 by this shell until
# it exits (not by a `flock -o` parent: a TERM to that parent would orphan
# the bench and free the lock). The Slurm commands run with fd 9 closed, as
# `flock -o` would run them. DDPCTL_BENCH_LOCKED=$SLURM: the caller holds it.
if [ "${DDPCTL_BENCH_LOCKED:-}" != "$SLURM" ]; then
  exec 9>>"/tmp/ddpctl-slurm-$SLURM.lock"
  flock 9
fi

on_login() { "$ls" --slurm "$SLURM" exec -- "$@" 9>&-; }
on_login scontrol ping >/dev/null || { echo "bench: the local Slurm $SLURM is not up (scripts/local-slurm --slurm $SLURM up)" >&2; exit 1; }
work=$(mktemp -d /tmp/ddpctl-bench-grid.XXXXXX)
# Job names of this bench only (the spec's name is the job's name).
grid_name=bench-grid-$$ loop_name=bench-loop-$$

# ids_in DIR: the job ids that the run records under DIR name, one per line.
ids_in() {
  find "$1" -name ledger.json -exec sed -n 's/.*"job_id": "\([0-9][0-9]*\)".*/\1/p' {} + 2>/dev/null | sort -u
}
# left: this bench's jobs not ended (squeue's default states: pending,
# running, suspended, completing, ...), one per line.
left() {
  on_login squeue -h -n "$grid_name,$loop_name" -o %i || true
}
cancel_all() {
  local ids
  mapfile -t ids < <(ids_in "$work")
  if [ "${#ids[@]}" -gt 0 ]; then printf '%s\n' "${ids[@]}" | xargs -r -n 500 "$ls" --slurm "$SLURM" exec -- scancel 2>/dev/null 9>&- || true; fi
  on_login scancel -n "$grid_name" 2>/dev/null || true
  on_login scancel -n "$loop_name" 2>/dev/null || true
  local t0=$SECONDS
  while [ -n "$(left)" ]; do
    [ $((SECONDS - t0)) -lt 60 ] || { echo "bench: jobs still in squeue 60 s after scancel: $(left | paste -sd' ')" >&2; return 1; }
    sleep 1
  done
}
cleanup() {
  cancel_all || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "bench: limits of Slurm $SLURM: $(on_login scontrol show config | grep -i -E '^(MaxArraySize|MaxJobCount)' | tr -s ' ' | paste -sd,)" >&2
echo "bench: QOS (Name|MaxSubmitPU|MaxJobsPU): $(on_login sacctmgr -n -P show qos format=Name,MaxSubmitJobsPerUser,MaxJobsPerUser | paste -sd' ')" >&2
echo "bench: associations with MaxSubmit/MaxJobs: $(on_login sacctmgr -n -P show assoc format=Account,User,MaxSubmit,MaxJobs | awk -F'|' '$3 != "" || $4 != ""' | paste -sd' ')" >&2

# The specs: the grid, and the single spec the loop submits with --set.
mkdir -p "$work/src" "$work/count/bin"
cd "$work/src"
lrs=(0.0001 0.0002 0.0003 0.0005 0.0007 0.001 0.0015 0.002 0.003 0.004
  0.005 0.006 0.007 0.008 0.01 0.015 0.02 0.03 0.05 0.1)
seeds=(1 2 3 4 5 6 7 8 9 10)
cells=$((${#lrs[@]} * ${#seeds[@]}))
spec_body() {
  cat <<YAML
name: $1
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 1
time: "00:05:00"
hold: true
command: "sleep 300"
env:
  LR: "0.001"
  SEED: "1"
YAML
}
spec_body "$loop_name" >spec.yaml
# flow A B...: a YAML flow list, "[A, B, ...]".
flow() {
  local IFS=, s
  s="$*"
  echo "[${s//,/, }]"
}
{
  spec_body "$grid_name"
  echo "grid:"
  echo "  env.LR: $(flow "${lrs[@]}")"
  echo "  env.SEED: $(flow "${seeds[@]}")"
} >grid.yaml

# Counting wrappers: each logs its name and execs what the login host runs.
for c in sbatch squeue sacct sinfo scontrol sacctmgr scancel; do
  real=$(on_login sh -c "command -v $c")
  printf '#!/bin/sh\necho %s >>%s/count/calls\nexec %s "$@"\n' "$c" "$work" "$real" >"$work/count/bin/$c"
  chmod +x "$work/count/bin/$c"
done
counted() { on_login env PATH="$work/count/bin:$PATH" "$@"; }
# tally: the calls logged since the last reset ("1 sbatch + 3 sinfo").
tally() {
  local c n out=""
  for c in sbatch squeue sacct sinfo scontrol sacctmgr scancel; do
    n=$(grep -cx "$c" "$work/count/calls" || true)
    [ "$n" = 0 ] || out+="${out:+ + }$n $c"
  done
  echo "${out:-0}"
}
# n_of KIND: how many KIND calls were logged since the last reset.
n_of() { grep -cx "$1" "$work/count/calls" || true; }
median() { sort -n | sed -n "$(((REPS + 1) / 2))p"; }
# timed_counted OUT ARGS...: runs ARGS on the login host through the counting
# wrappers, its output into OUT; prints its wall seconds.
timed_counted() {
  local out=$1
  shift
  : >"$work/count/calls"
  counted /usr/bin/time -f %e -o "$work/time" "$@" >"$out" 2>"$work/err" || { cat "$work/err" "$out" >&2; exit 1; }
  cat "$work/time"
}

# --- submit: the grid as one array, REPS times -----------------------------
times=()
for ((r = 1; r <= REPS; r++)); do
  times+=("$(timed_counted "$work/sweep$r.out" "$DDPCTL" sweep grid.yaml --runs "$work/grid$r")")
  if [ "$r" = 1 ]; then
    grid_calls=$(tally) grid_sbatch=$(n_of sbatch)
  else
    # Only the first sweep stays queued: both sides are measured among the
    # same 400 jobs.
    ids_in "$work/grid$r" | xargs -r "$ls" --slurm "$SLURM" exec -- scancel 9>&-
  fi
done
grid_submit_s=$(printf '%s\n' "${times[@]}" | median)
sweep_id=$(sed -n 's/^sweep \([^:]*\): .*/\1/p' "$work/sweep1.out")
array_id=$(ids_in "$work/grid1")
if [ -z "$sweep_id" ] || [ "$(wc -w <<<"$array_id")" != 1 ]; then
  echo "bench: the sweep did not make one array:" >&2
  cat "$work/sweep1.out" >&2
  exit 1
fi
held=$(on_login squeue -h -r -j "$array_id" -o '%i %r' | grep -c "^${array_id}_[0-9]* JobHeldUser$" || true)
[ "$held" = "$cells" ] || { echo "bench: $held of the array's $cells tasks are JobHeldUser" >&2; exit 1; }
echo "bench: sweep $sweep_id: array $array_id, $cells tasks held; $grid_calls; median ${grid_submit_s} s" >&2

# --- submit: the loop users write today -------------------------------------
# shellcheck disable=SC2016  # expanded by the login host's shell
loop_submit_s=$(timed_counted "$work/loop.out" bash -c '
  ddpctl=$1 runs=$2 nseeds=$3
  shift 3
  lrs=("${@:1:$#-nseeds}") seeds=("${@:$#-nseeds+1}")
  for lr in "${lrs[@]}"; do
    for seed in "${seeds[@]}"; do
      "$ddpctl" submit spec.yaml --runs "$runs" --set "env.LR=$lr" --set "env.SEED=$seed" || exit 1
    done
  done' bash "$DDPCTL" "$work/loop" "${#seeds[@]}" "${lrs[@]}" "${seeds[@]}")
loop_calls=$(tally) loop_sbatch=$(n_of sbatch)
mapfile -t loop_ids < <(ids_in "$work/loop")
[ "${#loop_ids[@]}" = "$cells" ] || { echo "bench: the loop made ${#loop_ids[@]} jobs of $cells" >&2; exit 1; }
held=$(on_login squeue -h -j "$(IFS=,; echo "${loop_ids[*]}")" -o %r | grep -cx JobHeldUser || true)
[ "$held" = "$cells" ] || { echo "bench: $held of the loop's $cells jobs are JobHeldUser" >&2; exit 1; }
echo "bench: loop: $cells jobs held; $loop_calls; ${loop_submit_s} s" >&2

# --- status ------------------------------------------------------------------
# status_cell RUNS ROWS ARGS...: median seconds of REPS refreshes and the
# calls of one more, as "seconds|calls|squeue|sacct"; checks the rows shown.
status_cell() {
  local runs=$1 rows=$2 i t shown times=()
  shift 2
  for ((i = 0; i < REPS; i++)); do
    on_login /usr/bin/time -f %e -o "$work/time" "$DDPCTL" status "$@" --runs "$runs" >"$work/status.out" 2>"$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    times+=("$(cat "$work/time")")
  done
  t=$(printf '%s\n' "${times[@]}" | median)
  # Rows of jobs only (a run's notes below the table also start with its id).
  shown=$(awk -v n="$grid_name|$loop_name" '$0 ~ "^(" n ")-" && $2 ~ /^[0-9]/' "$work/status.out" | wc -l)
  [ "$shown" = "$rows" ] || { echo "bench: status $* showed $shown rows, not $rows:" >&2; cat "$work/status.out" >&2; exit 1; }
  : >"$work/count/calls"
  counted "$DDPCTL" status "$@" --runs "$runs" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  echo "$t|$(tally)|$(n_of squeue)|$(n_of sacct)"
}
r=$(status_cell "$work/grid1" "$cells" "$sweep_id")
IFS='|' read -r s_sweep c_sweep q_sweep a_sweep <<<"$r"
r=$(status_cell "$work/grid1" 1)
IFS='|' read -r s_grid c_grid q_grid a_grid <<<"$r"
r=$(status_cell "$work/loop" "$cells")
IFS='|' read -r s_loop c_loop q_loop a_loop <<<"$r"
echo "bench: status: SWEEP $s_sweep s ($c_sweep), grid $s_grid s ($c_grid), loop $s_loop s ($c_loop)" >&2

# Everything cancelled now, and checked, before the table is printed.
cancel_all
echo "bench: all jobs of the bench cancelled; squeue shows none of them pending or running" >&2

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3g×", a / b; else print "-" }'; }
total() { awk -F' [+] ' '{ n = 0; for (i = 1; i <= NF; i++) n += $i; print n }' <<<"$1"; }
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | paste -sd/), $(free -g | awk '/Mem:/ {print $2}') GiB, $(on_login sinfo --version), $(date -u +%Y-%m-%d)"
# shellcheck disable=SC2016  # the backquotes are Markdown's
printf '| %s cells (%s LR × %s seeds), held | grid: `ddpctl sweep` (one array) | loop: %s × `ddpctl submit --set` | this / loop |\n' \
  "$cells" "${#lrs[@]}" "${#seeds[@]}" "$cells"
echo "|---|---:|---:|---:|"
echo "| submit: sbatch calls | $grid_sbatch | $loop_sbatch | $(ratio "$grid_sbatch" "$loop_sbatch") |"
echo "| submit: all Slurm calls | $(total "$grid_calls") ($grid_calls) | $(total "$loop_calls") ($loop_calls) | $(ratio "$(total "$grid_calls")" "$(total "$loop_calls")") |"
echo "| submit: wall time | $grid_submit_s s | $loop_submit_s s | $(ratio "$grid_submit_s" "$loop_submit_s") |"
# shellcheck disable=SC2016
printf '| `status SWEEP` (%s rows) vs `status` of the loop (%s rows): time | %s s | %s s | %s |\n' \
  "$cells" "$cells" "$s_sweep" "$s_loop" "$(ratio "$s_sweep" "$s_loop")"
echo "| … its Slurm calls (squeue / sacct) | $c_sweep ($q_sweep / $a_sweep) | $c_loop ($q_loop / $a_loop) | $(ratio "$(total "$c_sweep")" "$(total "$c_loop")") |"
# shellcheck disable=SC2016
printf '| `status` (the sweep in 1 row) vs `status` of the loop (%s rows): time | %s s | %s s | %s |\n' \
  "$cells" "$s_grid" "$s_loop" "$(ratio "$s_grid" "$s_loop")"
echo "| … its Slurm calls (squeue / sacct) | $c_grid ($q_grid / $a_grid) | $c_loop ($q_loop / $a_loop) | $(ratio "$(total "$c_grid")" "$(total "$c_loop")") |"
