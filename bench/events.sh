#!/usr/bin/env bash
# A run's events (issue 64, docs/json.md "Events") on the real local Slurm
# (SLURM, default 26.05), three measures:
#   latency  EVENTS (default 60) events written with ddpctl's own writer
#            (`ddpctl job event`, what race.sh and requeue.sh call) on the
#            login node, 0.2 to 1.0 s apart, to two followers of
#            `ddpctl events RUN --follow`: one on the login node, one from
#            the user's machine over `--on` (its ssh connection). For each
#            event: the time its line reached the follower minus its `t`
#            (the writer's clock, taken under the log's lock; one clock:
#            the cluster's containers share this host's). p50, p95, max.
#            Goal (issue 64): p95 <= 2 s locally, <= 5 s over --on.
#   big log  a run whose events.ndjson holds 1 GiB (about 4 M events in the
#            log's own format, made by this script) followed from its end:
#            the follower's peak RSS and its time to the state line and to
#            the next appended event, against the same run with a 1 MiB log
#            (baseline; ratio). Constant memory: the ratio of RSS near 1.
#   sweep    a 200-cell sweep (cells that only `true`), run to its end:
#            events written and the log's bytes; `status SWEEP` the first
#            time (it writes the 200 cells' ends) against the next one
#            (nothing left to write): median of REPS (default 3) sweeps.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
version=${SLURM:-26.05}
# The cluster of that version (scripts/local-slurm's state folder).
if [ "$version" = 22.05 ]; then export DDPCTL_SLURM_STATE=/tmp/ddpctl-local-slurm
else export DDPCTL_SLURM_STATE=/tmp/ddpctl-local-slurm-$version; fi
events=${EVENTS:-60} reps=${REPS:-3}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$root/tests/slurm/remote_lib.sh"
JOB_NAME=bench-events
PY=/usr/bin/python3
cluster_has_this_ddpctl
user_machine

# stamp.py N OUT: reads a follower's lines; for each of the first N events
# of type `requeued` (the writer's), the seconds from its `t` to now. Then
# it ends, and its follower with the next heartbeat (1 s: --heartbeat 1).
cat >"$T/stamp.py" <<'PY'
import json, sys, time
want, out = int(sys.argv[1]), open(sys.argv[2], "w")
got = 0
for line in sys.stdin:
    now = time.time()
    e = json.loads(line)
    if e.get("type") != "requeued":
        continue
    out.write(f"{now - e['t']:.4f}\n")
    out.flush()
    got += 1
    if got == want:
        break
PY
# stats FILE: p50 p95 max of a column of seconds.
stats() {
  $PY - "$1" <<'PY'
import sys
v = sorted(float(l) for l in open(sys.argv[1]))
q = lambda p: v[min(len(v) - 1, int(round(p * (len(v) - 1))))]
print(f"{len(v)} events: p50 {q(0.5):.3f} s, p95 {q(0.95):.3f} s, max {v[-1]:.3f} s")
PY
}

# 1. Latency. A run whose job is held (it never runs): the events come from
# the writer here alone.
write_spec job.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
hold: true
command: [sleep, '600']
YAML
run submit job.yaml --no-preflight
expect_code 0
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")
job=$(submitted_job_id)
at_exit "on_login scancel $job 2>/dev/null"
"$LOCAL_SLURM" exec -- "$DDPCTL" events "$run_id" --follow --heartbeat 1 --for 600 |
  $PY "$T/stamp.py" "$events" "$T/here.lat" &
here_pid=$!
env -u DDPCTL_RUNS "$DDPCTL" events "$run_id" --follow --heartbeat 1 --for 600 --on "$host" --remote-dir "$T" 2>"$T/there.err" |
  $PY "$T/stamp.py" "$events" "$T/there.lat" &
there_pid=$!
# Both followers printed their state line: they follow.
deadline=$((SECONDS + 60))
until [ -s "$run_dir/events.ndjson" ] && sleep 3; do [ "$SECONDS" -lt "$deadline" ] || fail "no events log"; done
for i in $(seq "$events"); do
  "$LOCAL_SLURM" exec -- env DDPCTL_RUN_DIR="$run_dir" SLURM_JOB_ID="$job" "$DDPCTL" job event requeued "reason=bench $i"
  sleep "$($PY -c 'import random; print(round(random.uniform(0.2, 1.0), 2))')"
done
wait "$here_pid" || true
wait "$there_pid" || true
[ "$(wc -l <"$T/here.lat")" -eq "$events" ] || fail "the follower here got $(wc -l <"$T/here.lat") of $events events"
[ "$(wc -l <"$T/there.lat")" -eq "$events" ] || fail "the follower over --on got $(wc -l <"$T/there.lat") of $events events"
echo "latency, on the login node: $(stats "$T/here.lat")"
echo "latency, over --on:         $(stats "$T/there.lat")"

# 2. A big log followed from its end. The run's events.ndjson is made
# bigger (the seq numbers go on); the follower's peak RSS by GNU time.
grow() {  # grow BYTES: the log of a copy of the run, BYTES long
  local dir=$T/runs/$run_id-$1
  rm -rf "$dir" && cp -r "$run_dir" "$dir"
  $PY - "$dir/events.ndjson" "$1" "$run_id-$1" <<'PY'
import json, sys
path, size, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
line = lambda seq: json.dumps({"job": "1", "metrics": {"epoch": 1, "loss": 0.5, "pad": "x" * 150}, "run": run,
    "schema": "ddpctl.event/1", "seq": seq, "t": 1796600000.0 + seq, "time": "2026-12-07T00:00:00.000Z", "type": "metric"},
    separators=(",", ":"), sort_keys=True) + "\n"
with open(path, "w") as f:
    seq, n, buf = 1, 0, []
    while n < size:
        l = line(seq); buf.append(l); n += len(l); seq += 1
        if len(buf) == 10000: f.write("".join(buf)); buf = []
    f.write("".join(buf))
PY
  echo "$dir"
}
follow_big() {  # follow_big DIR: peak RSS (KiB), s to the state line, s to an appended event
  local dir=$1 t0
  rm -f "$T/big.out" "$T/rss"
  t0=$($PY -c 'import time; print(time.time())')
  # Peak RSS of the follower: its rusage, by the login node's python3.
  "$LOCAL_SLURM" exec -- python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))' \
    "$T/rss" "$DDPCTL" events "$(basename "$dir")" --follow --heartbeat 60 --for 20 >"$T/big.out" &
  local pid=$!
  until grep -q '"type":"state"' "$T/big.out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || fail "the follower of $dir ended without its state: $(cat "$T/big.out")"
    sleep 0.05
  done
  local t_state
  t_state=$($PY -c "import time; print(f'{time.time() - $t0:.3f}')")
  "$LOCAL_SLURM" exec -- env DDPCTL_RUN_DIR="$dir" SLURM_JOB_ID="$job" "$DDPCTL" job event requeued "reason=after the big log"
  until grep -q 'after the big log' "$T/big.out"; do
    kill -0 "$pid" 2>/dev/null || fail "the follower of $dir ended before the appended event: $(tail -c 300 "$T/big.out")"
    sleep 0.05
  done
  local t_event
  t_event=$($PY -c "import time; print(f'{time.time() - $t0:.3f}')")
  wait "$pid" || true
  echo "$(cat "$T/rss") $t_state $t_event"
}
small=$(grow $((1 << 20)))
big=$(grow $((1 << 30)))
read -r rss_small state_small event_small < <(follow_big "$small")
read -r rss_big state_big event_big < <(follow_big "$big")
rm -rf "$big"
echo "big log: 1 MiB: peak RSS ${rss_small} KiB, state after ${state_small} s, the next event after ${event_small} s"
echo "big log: 1 GiB: peak RSS ${rss_big} KiB, state after ${state_big} s, the next event after ${event_big} s"
echo "big log: RSS ratio 1 GiB / 1 MiB: $($PY -c "print(f'{$rss_big / $rss_small:.2f}')")"

# 3. A 200-cell sweep, run to its end, REPS times (the held job of 1 and 2
# cancelled first: the queue holds only the sweep's jobs).
on_login scancel "$job"
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [true]
grid:
  env.LR: [$(seq -s, 1 20)]
  env.SEED: [$(seq -s, 1 10)]
YAML
for r in $(seq "$reps"); do
  export DDPCTL_RUNS=$T/sweeps.$r
  run sweep grid.yaml --no-preflight
  expect_code 0
  sweep=$(basename "$(only_run_dir)")
  deadline=$((SECONDS + 900))
  until [ -z "$(on_login squeue -h -n "$JOB_NAME" -t PD,R,CG -o %i)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not end in 900 s$(jobs_report)"
    sleep 2
  done
  for n in first second; do
    s0=$($PY -c 'import time; print(time.time())')
    "$LOCAL_SLURM" exec -- env DDPCTL_RUNS="$DDPCTL_RUNS" "$DDPCTL" status "$sweep" >/dev/null
    $PY -c "import time; print(f'{time.time() - $s0:.3f}')" >>"$T/status.$n"
  done
  log=$DDPCTL_RUNS/$sweep/events.ndjson
  echo "sweep $r: $(wc -l <"$log") events, $(stat -c %s "$log") bytes; ended: $(grep -c '"type":"ended"' "$log")"
done
median() { sort -n "$1" | sed -n "$((($(wc -l <"$1") + 1) / 2))p"; }
echo "status SWEEP (200 cells): first (writes the ends) $(median "$T/status.first") s, next $(median "$T/status.second") s (median of $reps)"
