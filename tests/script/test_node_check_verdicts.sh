#!/usr/bin/env bash
# The node check before training (no restart:), as the script reads the
# agent's verdict (`ddpctl job checked`, node_check.hpp CheckVerdict):
#   0  the check's lines are printed and training starts;
#   10 the job is requeued without the nodes on the verdict's first line;
#   11 the job fails before training;
#   anything else is the agent failing: noted, and training goes on.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_ddpctl() {
  case "$1 ${2:-}" in
    "job checked")
      case "$VERDICT" in
        0) echo "ddpctl: node check: all 2 node(s) fine" ;;
        10) printf 'n2\nnode n2 cannot reach n1:29500\n' ;;
        11) echo "ddpctl: node check: n2 has no GPU" >&2 ;;
      esac
      exit "$VERDICT"
      ;;
    "--version ") echo "ddpctl stub" ;;
  esac
}
export -f answer_ddpctl
spec checked <<'EOF_SPEC'
name: checked
cluster: local
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
time: "00:10:00"
output_dir: logs
requeue: {max_restarts: 1, grace: 60}
trainer: {model: smallcnn, data: synthetic}
EOF_SPEC
render checked.yaml
nodes=2
training='^srun --kill-on-bad-exit=1 '

VERDICT=0 run_job "$script"
expect_rc 0
expect_call '^srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --kill-on-bad-exit=0 --quiet .*ddpctl job check '
expect_call '^ddpctl job checked .*--nodes n1 n2 --max-restarts 1$'
expect_job_out "ddpctl: node check: all 2 node(s) fine"
expect_calls 1 "$training"

: >"$STUB_LOG"
VERDICT=10 run_job "$script"
expect_rc 0
expect_calls 0 "$training"
expect_call '^ddpctl job requeue --exclude n2$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 1): by the node check: node n2 cannot reach n1:29500; excluding n2"

: >"$STUB_LOG"
VERDICT=11 run_job "$script"
expect_rc 1
expect_calls 0 "$training"
expect_no_call '^(scontrol requeue|ddpctl job requeue)'
expect_job_err "ddpctl: error: the node check failed (above); the job ends before training"

: >"$STUB_LOG"
VERDICT=2 run_job "$script"
expect_rc 0
expect_calls 1 "$training"
expect_job_err "ddpctl: monitor: error: $T/bin/ddpctl job checked failed (exit status 2)"
grep -qF "job checked failed (exit status 2)" "$T"/job/logs/*agent-error* 2>/dev/null || fail_job "no agent-error file in logs/: $(ls "$T/job/logs")"
echo ok
