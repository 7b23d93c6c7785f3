#!/usr/bin/env bash
# What `ddpctl status` costs as the cluster's queue grows, on the real local
# Slurm 26.05 (restarted here with MaxJobCount 30000): 20 runs of the user's,
# each one held job, among 5,000 and then 20,000 other held jobs. Measured in
# the same run against the baseline, ddpctl as landed before status asked for
# its jobs by id (git commit $BASE, default e1fc421, built into /tmp), which
# read the whole queue (squeue --json --states=all) on every refresh:
#   - `status --all`: wall time (median of REPS, default 5) and peak memory
#   - `status --all --watch` over 40 runs for 60 s, nothing changing: Slurm
#     calls per minute (every squeue/sacct/sinfo/scontrol through a counting
#     wrapper on PATH), with only those 40 jobs queued and among 20,000
# Prints one table; bench/RESULTS.md keeps the numbers with the machine line.
#   bench/status_queue.sh            (as root; the 26.05 cluster is restarted)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DDPCTL=${DDPCTL:-$root/build/src/ddpctl}
BASE=${BASE:-e1fc421}
REPS=${REPS:-5}
ls="$root/scripts/local-slurm"
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
work=$(mktemp -d /tmp/ddpctl-bench-queue.XXXXXX)
base_src=/tmp/ddpctl-bench-base-src base_build=/tmp/ddpctl-bench-base-build
cleanup() {
  "$ls" --slurm 26.05 down >/dev/null 2>&1 || true
  git -C "$root" worktree remove --force "$base_src" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The baseline ddpctl, built from its commit (only the CLI; ccache helps).
if [ ! -x "$base_build/src/ddpctl" ] || [ "$(cat "$base_build/commit" 2>/dev/null)" != "$BASE" ]; then
  git -C "$root" worktree remove --force "$base_src" >/dev/null 2>&1 || true
  git -C "$root" worktree add --detach "$base_src" "$BASE" >/dev/null
  cmake -S "$base_src" -B "$base_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPCTL_BUILD_TESTS=OFF \
    -DDDPCTL_BUILD_TRAINER=OFF >/dev/null
  cmake --build "$base_build" --target ddpctl -j 2 >/dev/null
  echo "$BASE" >"$base_build/commit"
fi
BASELINE=$base_build/src/ddpctl

"$ls" --slurm 26.05 down >/dev/null 2>&1 || true
DDPCTL_SLURM_MAX_JOBS=30000 "$ls" --slurm 26.05 up >/dev/null
on_login() { "$ls" --slurm 26.05 exec -- "$@"; }
cd "$work"

# The user's runs: held jobs, one per run (status has them all to show), in
# their own runs folder.
submit_runs() {
  local n=$1 i
  export DDPCTL_RUNS="$work/runs$n"
  for ((i = 0; i < n; i++)); do
    cat >"spec$n-$i.yaml" <<YAML
name: mine$n-$i
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 1
time: "00:05:00"
hold: true
command: "true"
YAML
    on_login "$DDPCTL" submit "spec$n-$i.yaml" --no-preflight >/dev/null
  done
}
# Other users' jobs: held, so nothing runs or ends while measuring; made by
# 8 sbatch loops at once on the login host.
fill_queue_login() {
  local want=$1 have
  have=$(on_login squeue -h -a -o %i | wc -l)
  [ "$have" -lt "$want" ] || return 0
  # shellcheck disable=SC2016  # expanded by the login host's shell
  on_login bash -c 'seq "$1" | xargs -P 8 -n 100 sh -c '"'"'for _ do sbatch -H -p cpu -J other -o /dev/null --wrap true >/dev/null || exit 1; done'"'"' sh' \
    bash "$((want - have))"
  have=$(on_login squeue -h -a -o %i | wc -l)
  echo "queue: $have jobs" >&2
}

# CMD... N times: median wall seconds and the largest peak RSS (MiB; a
# process's peak includes its children's, such as squeue's).
measure() {
  local i t rss times=() peak=0
  for ((i = 0; i < REPS; i++)); do
    on_login /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    read -r t rss <"$work/time"
    times+=("$t")
    [ "$rss" -le "$peak" ] || peak=$rss
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p")" "$((peak / 1024))"
}

# Slurm calls of `status --all --watch` in 60 s, counted by wrappers first on PATH.
count_watch_calls() {
  local bin=$1 c
  rm -rf "$work/count" && mkdir -p "$work/count/bin"
  for c in squeue sacct sinfo scontrol sbatch; do
    real=$(on_login sh -c "command -v $c")
    printf '#!/bin/sh\necho %s >>%s/count/calls\nexec %s "$@"\n' "$c" "$work" "$real" >"$work/count/bin/$c"
    chmod +x "$work/count/bin/$c"
  done
  : >"$work/count/calls"
  on_login env PATH="$work/count/bin:$PATH" timeout 60 "$bin" status --all --watch >/dev/null 2>&1 || true
  wc -l <"$work/count/calls"
}

# ids_of RUNS: the job ids in the ledgers under RUNS, comma-separated.
ids_of() { cat "$1"/*/ledger.json | sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' | paste -sd,; }

submit_runs 40
watch_small=("$(count_watch_calls "$DDPCTL")" "$(count_watch_calls "$BASELINE")")
submit_runs 20
results=()
for size in 5000 20000; do
  fill_queue_login "$size"
  read -r t_new m_new < <(measure "$DDPCTL" status --all)
  read -r t_old m_old < <(measure "$BASELINE" status --all)
  results+=("status --all (20 runs)|$size $t_new $m_new $t_old $m_old")
  read -r t_new m_new < <(measure "$DDPCTL" status mine20-0)
  read -r t_old m_old < <(measure "$BASELINE" status mine20-0)
  results+=("status RUN (one job)|$size $t_new $m_new $t_old $m_old")
  # What the one squeue call of status --all costs by itself.
  read -r t_new m_new < <(measure squeue --json --states=all --jobs="$(ids_of "$work/runs20")")
  read -r t_old m_old < <(measure squeue --json --states=all)
  results+=("its squeue alone (--jobs=20 ids vs all)|$size $t_new $m_new $t_old $m_old")
done
export DDPCTL_RUNS="$work/runs40"
watch_big=("$(count_watch_calls "$DDPCTL")" "$(count_watch_calls "$BASELINE")")

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(on_login sinfo --version), $(date -u +%Y-%m-%d)"
echo "| what | other jobs in the queue | this ddpctl | baseline ($BASE) | time ratio | peak memory, this | baseline | memory ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for r in "${results[@]}"; do
  what=${r%%|*}
  read -r size t_new m_new t_old m_old <<<"${r#*|}"
  awk -v w="$what" -v s="$size" -v a="$t_new" -v b="$t_old" -v ma="$m_new" -v mb="$m_old" \
    'BEGIN { printf "| %s | %d | %.2f s | %.2f s | %.1f× faster | %d MiB | %d MiB | %.1f× less |\n", w, s, a, b, b / (a > 0 ? a : 0.01), ma, mb, mb / (ma > 0 ? ma : 1) }'
done
echo
echo "| status --all --watch over 40 held runs, 60 s | Slurm calls, this ddpctl | baseline ($BASE) |"
echo "|---|---:|---:|"
echo "| only those 40 jobs in the queue | ${watch_small[0]} | ${watch_small[1]} |"
echo "| among 20,000 other jobs | ${watch_big[0]} | ${watch_big[1]} |"
