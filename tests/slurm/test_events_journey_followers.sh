#!/usr/bin/env bash
# A run's events, told by the real cluster (docs/json.md "Events"): a race
# of two shapes with restart: {in_job: 1, spares: 1} whose winner's rank 0
# is killed mid-training, so that it restarts inside its job on the spare.
# Two followers of `ddpctl events RUN --follow` (one on the login node, one
# from the user's machine over --on) are each killed and started again with
# --since the last cursor they printed, 10 times while the run lives (each
# after a line it printed, at least 2 s apart): 5 before the kill of rank
# 0, 5 after its restart (which trains until the test lets it finish);
# then they follow it to its end.
# Each follower's lines put together hold every event of the run once, in
# seq order with no gap, as `ddpctl events RUN` has them all; every line
# validates against ddpctl.event/1; and the events say what happened, in
# order: the submissions, the race won (and the other shape standing down
# or cancelled), the start, the node left out and the restart, the ends
# with status's reason, the run's end.
# One version: a user journey, not what differs between Slurm versions.
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/restart_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/restart_lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
cluster_has_this_ddpctl
user_machine
PY=/usr/bin/python3
write_step_program
# The restarted step trains until the followers were killed 10 times.
# shellcheck disable=SC2016 # program.sh's own variables, not this shell's
sed -i 's|^while \[ "$step" -lt "$last" \]; do$|while [ "$step" -lt "$last" ] \|\| [ ! -e "$dir/finish" ]; do|' program.sh
# shellcheck disable=SC2016 # the same
grep -qF '[ ! -e "$dir/finish" ]' program.sh || fail "program.sh does not wait for finish: $(cat program.sh)"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
restart: {in_job: 1, spares: 1}
command: [$T/program.sh]
alternatives:
  - {nodes: 1, label: one}
YAML
run submit job.yaml
expect_code 0
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")

# follow NAME CMD...: a follower (CMD + --since) killed after a line it
# printed, 10 times, each at least 2 s after the one before; then it
# follows to the end. Each follower's lines, as they were when it was
# killed, go to $T/NAME.got.<i>; $T/NAME.kills counts the kills.
follow() {
  local name=$1 i=0 cursor=start pid since last=0 lines
  shift
  for i in $(seq 0 10); do
    # A session of its own: the kill takes its ssh too (--on).
    setsid "$@" --since "$cursor" >"$T/$name.$i.live" 2>"$T/$name.$i.err" &
    pid=$!
    if [ "$i" -eq 10 ]; then
      since=$SECONDS
      while kill -0 "$pid" 2>/dev/null; do
        [ $((SECONDS - since)) -lt 240 ] || { kill -- -"$pid"; fail "$name's last follower did not end with the run: $(tail -n 3 "$T/$name.$i.live")$(jobs_report)"; }
        sleep 0.5
      done
      wait "$pid" || fail "$name's last follower ended with $?: $(cat "$T/$name.$i.err")"
      cp "$T/$name.$i.live" "$T/$name.got.$i"
      return
    fi
    since=$SECONDS
    until lines=$(grep -c '"cursor"' "$T/$name.$i.live" 2>/dev/null) && [ "$lines" -ge 1 ] && [ $((SECONDS - last)) -ge 2 ]; do
      kill -0 "$pid" 2>/dev/null || break  # it ended by itself: the run ended
      [ $((SECONDS - since)) -lt 240 ] || { kill -- -"$pid"; fail "$name's follower $i printed nothing in 240 s: $(cat "$T/$name.$i.err")"; }
      sleep 0.2
    done
    kill -- -"$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo $((i + 1)) >"$T/$name.kills"
    last=$SECONDS
    # Its whole lines as they were: a line cut by the kill is not its.
    $PY -c 'import sys; d=open(sys.argv[1]).read(); sys.stdout.write(d[:d.rfind("\n")+1])' "$T/$name.$i.live" >"$T/$name.got.$i"
    c=$($PY -c 'import json,sys; ls=[json.loads(l) for l in open(sys.argv[1])]; print(ls[-1]["cursor"] if ls else "")' "$T/$name.got.$i")
    [ -z "$c" ] || cursor=$c
  done
}
follow here "$LOCAL_SLURM" exec -- "$DDPCTL" events "$run_id" --follow --heartbeat 1 &
here_pid=$!
follow there env -u DDPCTL_RUNS "$DDPCTL" events "$run_id" --follow --heartbeat 1 --on "$host" --remote-dir "$T" &
there_pid=$!

# until_killed N: both followers were killed N times.
until_killed() {
  local since=$SECONDS
  until [ "$(cat "$T/here.kills" 2>/dev/null)" -ge "$1" ] 2>/dev/null &&
    [ "$(cat "$T/there.kills" 2>/dev/null)" -ge "$1" ] 2>/dev/null; do
    [ $((SECONDS - since)) -lt 120 ] ||
      fail "the followers were not killed $1 times in 120 s: here $(cat "$T/here.kills" 2>&1), there $(cat "$T/there.kills" 2>&1)$(jobs_report)"
    sleep 0.2
  done
}
wait_mid_training 0 "the race"
until_killed 5
read -r pid node winner <pid.0.0
kill -KILL "$pid"
since=$SECONDS
until [ -s pid.1.0 ]; do
  [ $((SECONDS - since)) -lt 120 ] || fail "the job did not restart on the spare in 120 s$(jobs_report)"
  sleep 0.2
done
until_killed 10
touch finish
wait_for_sacct "$winner" COMPLETED 120
wait "$here_pid" || fail "the follower on the login node failed"
wait "$there_pid" || fail "the follower over --on failed"

find "$T" -name '*.got.*' -empty -delete  # a follower started after the end prints nothing
run events "$run_id"
expect_code 0
cp "$T/out" "$T/all.ndjson"
$PY "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" "$T/all.ndjson" "$T"/here.got.* "$T"/there.got.* ||
  fail "a line is not a valid event"
# Every event once, in seq order, from the followers' lines put together.
for name in here there; do
  $PY - "$T/all.ndjson" "$T/$name".got.* <<'PY' || fail "$name's followers lost or repeated events"
import json, sys
def events(path):
    return [json.loads(l) for l in open(path) if l.strip()]
every = [e["seq"] for e in events(sys.argv[1])]
assert every == list(range(1, len(every) + 1)), f"the log's seqs: {every}"
got = []
for path in sorted(sys.argv[2:], key=lambda p: int(p.rsplit(".", 1)[1])):
    got += [e["seq"] for e in events(path) if "seq" in e]
print(f"{len(sys.argv) - 2} followers, {len(got)} events: {got}")
assert got == every, f"the followers' seqs {got} are not the log's {every}"
PY
done
# What the events say, in order.
$PY - "$T/all.ndjson" "$winner" "$node" <<'PY' || fail "the events do not tell the run: $(cat "$T/all.ndjson")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
winner, node = sys.argv[2], sys.argv[3]
types = [e["type"] for e in evs if e["type"] not in ("progress", "metric")]
print("types:", types)
assert types[:4] == ["submitting", "submitted", "submitting", "submitted"], types
assert types[-1] == "run_ended", types
mine = [e["type"] for e in evs if e.get("job") == winner and e["type"] not in ("progress", "metric", "submitted")]
assert mine == ["race_won", "started", "node_excluded", "restarted", "ended"], mine
by = {e["type"]: e for e in evs if e.get("job") == winner}
assert by["node_excluded"]["nodes"] == [node], by["node_excluded"]
assert "killed (signal 9)" in by["restarted"]["reason"], by["restarted"]
assert by["ended"]["state"] == "COMPLETED", by["ended"]
others = [e for e in evs if e.get("job") not in (None, winner) and e["type"] not in ("submitted",)]
assert [e["type"] for e in others][-1] == "ended", others
assert set(e["type"] for e in others) <= {"race_lost", "cancel_asked", "ended"}, others
PY
