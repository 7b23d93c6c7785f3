#!/usr/bin/env bash
# On a terminal, status --watch redraws its table in place: the pane shows
# one table, updated (here under tmux), and it ends when the job has ended.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
command -v tmux >/dev/null || fail "tmux is not installed (scripts/setup installs it)"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 1"
YAML
hold_submissions
run submit job.yaml
expect_code 0
id=$(job_ids)
[ -n "$id" ] || fail "the submitted job is not in squeue"
sock="ddpctl-test-$$"
at_exit "tmux -L $sock kill-server"
tmux -L "$sock" new-session -d -x 220 -y 40 -s watch \
  "PATH='$PATH' DDPCTL_RUNS='$DDPCTL_RUNS' DDPCTL_POLL_INTERVAL=0.5 '$LOCAL_SLURM' exec -- '$DDPCTL' status --watch '$JOB_NAME'; echo WATCH-ENDED; sleep 600"
pane() { tmux -L "$sock" capture-pane -p -t watch; }
# wait_pane TEXT: until the pane shows TEXT (60 s).
wait_pane() {
  local deadline=$((SECONDS + 60)) screen
  while :; do
    screen=$(pane)
    grep -q -- "$1" <<<"$screen" && return 0
    [ "$SECONDS" -lt "$deadline" ] || fail "the pane never showed '$1'; it shows:"$'\n'"$screen"
    sleep 0.2
  done
}
wait_pane "PENDING"
on_login scontrol release "$id" || fail "scontrol release $id failed"
wait_pane "WATCH-ENDED"
screen=$(pane)
grep -q "COMPLETED" <<<"$screen" || fail "the pane does not show the job COMPLETED:"$'\n'"$screen"
[ "$(grep -c "ddpctl status, every" <<<"$screen")" -eq 1 ] || fail "the pane shows more than one frame (not redrawn in place):"$'\n'"$screen"
[ "$(grep -c "^RUN " <<<"$screen")" -eq 1 ] || fail "the pane shows more than one table:"$'\n'"$screen"
