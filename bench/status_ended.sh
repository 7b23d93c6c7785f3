#!/usr/bin/env bash
# What `ddpctl status` costs once runs have ended (issue 37), against the
# landed main (BASE, default 97091f7), both measured in this one run on the
# real local Slurm (SLURM, default 22.05; 24.11 and 26.05 work the same).
#
# The jobs are real: JOBS (default 1,500) held one-node jobs made with
# sbatch, then cancelled. The run folders are made from one real run that
# `ddpctl submit` recorded (its run.json, spec and script), copied into
# 1,500 and 10,000 run folders whose ledgers each name one of those jobs
# (the 1,500 runs one job each; the 10,000 runs reuse the 1,500 jobs in
# turn: 10,000 runs, 1,500 distinct job ids). Each cell is a median of REPS
# (default 3) runs; its Slurm calls (squeue, sacct, sinfo, scontrol) are
# counted in one more run, by wrappers first on PATH that log and exec the
# real command. Cells:
#   pending            the jobs held (PENDING): status, status --all
#   ended, listed      just cancelled, squeue still lists them (MinJobAge):
#                      status --all, 1,500 runs (the issue's 1,500 sacct calls)
#   ended              squeue has forgotten them (the script waits for it;
#                      the 1,500-run folder only, see below):
#                      the first status --all (this ddpctl records the ends;
#                      one sample), then status and status --all
#   a day later        (1,500 runs) status without arguments under faketime +25 h (the
#                      runs have ended over 24 h ago), with the index of
#                      ended runs and without it (every ledger read)
# Prints the tables for bench/RESULTS.md.
#   BASELINE=/path/to/old/ddpctl bench/status_ended.sh
# As root (local-slurm); while tests share the cluster, under its lock:
#   flock /tmp/ddpctl-slurm-22.05.lock bench/status_ended.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DDPCTL=${DDPCTL:-$root/build/src/ddpctl}
BASE=${BASE:-97091f7}
SLURM=${SLURM:-22.05}
JOBS=${JOBS:-1500}
REPS=${REPS:-3}
ls="$root/scripts/local-slurm"
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
command -v faketime >/dev/null || { echo "bench: faketime is needed (apt-get install faketime)" >&2; exit 1; }
work=$(mktemp -d /tmp/ddpctl-bench-ended.XXXXXX)
ids=()
cleanup() {
  if [ "${#ids[@]}" -gt 0 ]; then printf '%s\n' "${ids[@]}" | xargs -r -n 500 "$ls" --slurm "$SLURM" exec -- scancel 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${BASELINE:-}" ]; then
  # The baseline ddpctl, built from its commit (only the CLI; ccache helps).
  base_src=/tmp/ddpctl-bench-base-$BASE-src base_build=/tmp/ddpctl-bench-base-$BASE-build
  if [ ! -x "$base_build/src/ddpctl" ]; then
    git -C "$root" worktree remove --force "$base_src" >/dev/null 2>&1 || true
    git -C "$root" worktree add --detach "$base_src" "$BASE" >/dev/null
    cmake -S "$base_src" -B "$base_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPCTL_BUILD_TESTS=OFF \
      -DDDPCTL_BUILD_TRAINER=OFF >/dev/null
    cmake --build "$base_build" --target ddpctl -j 2 >/dev/null
    git -C "$root" worktree remove --force "$base_src" >/dev/null 2>&1 || true
  fi
  BASELINE=$base_build/src/ddpctl
fi

on_login() { "$ls" --slurm "$SLURM" exec -- "$@"; }
on_login scontrol ping >/dev/null || { echo "bench: the local Slurm $SLURM is not up (scripts/local-slurm --slurm $SLURM up)" >&2; exit 1; }
cd "$work"

# The template: one real run recorded by ddpctl submit (its job cancelled).
cat >spec.yaml <<'YAML'
name: ended
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 1
time: "00:05:00"
hold: true
command: "true"
YAML
on_login "$DDPCTL" submit spec.yaml --runs "$work/template" --no-preflight >/dev/null
template=$(ls -d "$work"/template/ended-*)
ids+=("$(sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' "$template/ledger.json")")

# JOBS held jobs, by 4 sbatch loops at once on the login host.
# shellcheck disable=SC2016  # expanded by the login host's shell
mapfile -t made < <(on_login bash -c 'seq "$1" | xargs -P 4 -n 50 sh -c '"'"'for _ do sbatch --parsable -H -p cpu -J bench-ended -o /dev/null --wrap true || exit 1; done'"'"' sh' bash "$JOBS")
ids+=("${made[@]}")
[ "${#made[@]}" -eq "$JOBS" ] || { echo "bench: made ${#made[@]} jobs of $JOBS" >&2; exit 1; }

# make_runs N DIR: N run folders from the template, run i naming job i mod JOBS.
make_runs() {
  python3 - "$template" "$2" "$1" "${made[@]}" <<'PY'
import json, os, secrets, sys
template, out, n, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
run = json.load(open(os.path.join(template, "run.json")))
ledger = json.load(open(os.path.join(template, "ledger.json")))
os.makedirs(out)
stamp = os.path.basename(template).split("-")[1]
for i in range(n):
    token = secrets.token_hex(6)
    rid = f"ended-{stamp}-{token}"
    d = os.path.join(out, rid)
    os.mkdir(d)
    for f in os.listdir(template):
        if f not in ("run.json", "ledger.json", "ledger.lock") and os.path.isfile(os.path.join(template, f)):
            os.link(os.path.join(template, f), os.path.join(d, f))
    json.dump(run, open(os.path.join(d, "run.json"), "w"), indent=2)
    a = dict(ledger["attempts"][0], token=token, job_id=jobs[i % len(jobs)])
    a["argv"] = [w.replace(ledger["attempts"][0]["token"], token) for w in a["argv"]]
    json.dump(dict(ledger, run=rid, attempts=[a]), open(os.path.join(d, "ledger.json"), "w"), indent=2)
PY
}
make_runs "$JOBS" runs1500
make_runs 10000 runs10000

mkdir -p count/bin
for c in squeue sacct sinfo scontrol; do
  real=$(on_login sh -c "command -v $c")
  printf '#!/bin/sh\necho %s >>%s/count/calls\nexec %s "$@"\n' "$c" "$work" "$real" >"count/bin/$c"
  chmod +x "count/bin/$c"
done
# calls BIN ARGS...: the Slurm calls of one run ("8 squeue + 1 sacct").
calls() {
  : >count/calls
  on_login env PATH="$work/count/bin:$PATH" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  local out=""
  for c in squeue sacct sinfo scontrol; do
    n=$(grep -cx "$c" count/calls || true)
    [ "$n" = 0 ] || out+="${out:+ + }$n $c"
  done
  echo "${out:-0}"
}
# seconds REPS BIN ARGS...: the median wall time of REPS runs.
seconds() {
  local reps=$1 i times=()
  shift
  for ((i = 0; i < reps; i++)); do
    on_login /usr/bin/time -f %e -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    times+=("$(cat "$work/time")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((reps + 1) / 2))p"
}
rows=()
# cell WHAT RUNS REPS_BASELINE ARGS...: both ddpctls, time and calls.
cell() {
  local what=$1 runs=$2 base_reps=$3 t_new t_old c_new c_old
  shift 3
  t_new=$(seconds "$REPS" "$DDPCTL" "$@" --runs "$work/$runs")
  c_new=$(calls "$DDPCTL" "$@" --runs "$work/$runs")
  t_old=$(seconds "$base_reps" "$BASELINE" "$@" --runs "$work/$runs")
  c_old=$(calls "$BASELINE" "$@" --runs "$work/$runs")
  rows+=("$what|${runs#runs}|$*|$c_new|$c_old|$t_new|$t_old")
  echo "bench: $what ${runs#runs} $*: $c_new calls, $t_new s; baseline $c_old calls, $t_old s" >&2
}

for n in 1500 10000; do
  cell pending "runs$n" "$REPS" status
  cell pending "runs$n" "$REPS" status --all
done

# Cancelled: squeue lists them for MinJobAge, then forgets them.
printf '%s\n' "${made[@]}" | xargs -n 500 "$ls" --slurm "$SLURM" exec -- scancel
ended_at=$SECONDS
# By id: a held job cancelled before it was ever eligible is outside any
# time window sacct selects by (-S), though -j shows it.
until [ "$(on_login sacct -n -X -P --jobs="$(IFS=,; echo "${made[*]}")" -o State | grep -c '^CANCELLED')" -ge "$JOBS" ]; do
  [ $((SECONDS - ended_at)) -lt 600 ] || { echo "bench: sacct does not show the $JOBS jobs cancelled after 600 s" >&2; exit 1; }
  sleep 1
done
cell "ended, listed" runs1500 1 status --all
listed=$(on_login squeue -h -t all --name=bench-ended -o %i | wc -l)
[ "$listed" -ge "$JOBS" ] || echo "bench: warning: squeue forgot $((JOBS - listed)) jobs during the 'ended, listed' cell" >&2
while [ -n "$(on_login squeue -h -t all --name=bench-ended -o %i)" ]; do
  [ $((SECONDS - ended_at)) -lt 900 ] || { echo "bench: squeue still lists the jobs 15 min after they ended" >&2; exit 1; }
  sleep 10
done
echo "bench: squeue forgot the jobs $((SECONDS - ended_at)) s after they ended" >&2

# Ended: the 1,500-run folder only. In the 10,000-run folder the runs share
# the 1,500 jobs, which real runs never do (a job is one run's), and the
# ledgers keep a job's end in the run that made it, so 8,500 of those runs
# never record one: what it would measure cannot happen. 10,000 ended runs
# of their own are measured on a synthesized folder (RESULTS.md).
n=1500
# This ddpctl's first look records the ends (one sample: it happens once;
# timed with the counting wrappers in place, two calls' worth).
start=$(date +%s.%N)
first_calls=$(calls "$DDPCTL" status --all --runs "$work/runs$n")
first_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
rows+=("ended, first look|$n|status --all|$first_calls||$first_s|")
cell ended "runs$n" "$REPS" status
cell ended "runs$n" "$REPS" status --all
# The issue's reference: one sacct for every job.
sacct_alone=$(seconds "$REPS" sacct -X -n -P --duplicates --starttime=1970-01-01 --jobs="$(IFS=,; echo "${made[*]}")")

# A day later: the runs ended over 24 h ago; status without arguments.
on_login "$DDPCTL" status --runs "$work/runs$n" >/dev/null  # the index, as any earlier status leaves it
t_idx=$(seconds "$REPS" faketime -f +25h "$DDPCTL" status --runs "$work/runs$n")
c_idx=$(calls faketime -f +25h "$DDPCTL" status --runs "$work/runs$n")
times=()
for ((i = 0; i < REPS; i++)); do
  rm -f "$work/runs$n/.index.json" "$work/runs$n/.index-views"
  times+=("$(seconds 1 faketime -f +25h "$DDPCTL" status --runs "$work/runs$n")")
done
t_cold=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p")
t_old=$(seconds "$REPS" faketime -f +25h "$BASELINE" status --runs "$work/runs$n")
c_old=$(calls faketime -f +25h "$BASELINE" status --runs "$work/runs$n")
rows+=("a day later, index|$n|status|$c_idx|$c_old|$t_idx|$t_old")
rows+=("a day later, no index|$n|status|$c_idx|$c_old|$t_cold|$t_old")
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | paste -sd/), $(free -g | awk '/Mem:/ {print $2}') GiB, $(on_login sinfo --version), $(date -u +%Y-%m-%d)"
echo "| jobs | runs | command | Slurm calls, this ddpctl | baseline ($BASE) | time, this | baseline | time ratio |"
echo "|---|---:|---|---|---|---:|---:|---:|"
for r in "${rows[@]}"; do
  IFS='|' read -r what n cmd c_new c_old t_new t_old <<<"$r"
  ratio=""
  [ -z "$t_old" ] || ratio=$(awk -v a="$t_new" -v b="$t_old" 'BEGIN { printf "%.1f× faster", b / (a > 0 ? a : 0.01) }')
  # shellcheck disable=SC2016  # the backquotes are Markdown's
  printf '| %s | %s | `%s` | %s | %s | %s s | %s | %s |\n' "$what" "$n" "$cmd" "$c_new" "${c_old:--}" "$t_new" \
    "${t_old:+$t_old s}" "$ratio"
done
echo
echo "one sacct -X -P --duplicates of all $JOBS job ids, alone: $sacct_alone s"
