#!/usr/bin/env bash
# cancel SWEEP --cell NAME cancels that cell's task alone (scancel A_i) and
# confirms it; cancel SWEEP then cancels the rest, running and pending (the
# collapsed record's cells too); retry would submit all three again.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 100M
command: 'sleep 300'
grid:
  env.LR: ["0.1", "0.2", "0.3"]
  max_parallel: 2
YAML
run sweep grid.yaml
expect_code 0
sweep=$(basename "$(only_run_dir)")
deadline=$((SECONDS + 90))
while :; do
  run status "$sweep"
  [ "$(grep -c ' RUNNING ' "$T/out" || true)" = 2 ] && [ "$(grep -c ' PENDING ' "$T/out" || true)" = 1 ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "expected 2 cells RUNNING and 1 PENDING: $(cat "$T/out" "$T/err")"
  sleep 0.5
done
run cancel "$sweep" --cell LR=0.1
expect_code 0
expect_out "cell LR=0.1"
expect_out "CANCELLED"
run status "$sweep"
row=$(grep "LR=0.1 " "$T/out" || true)
[[ $row == *CANCELLED* ]] || fail "LR=0.1 is not CANCELLED: $(cat "$T/out")"
row=$(grep "LR=0.2 " "$T/out" || true)
if [ -z "$row" ] || [[ $row == *CANCELLED* ]]; then fail "LR=0.2 was cancelled too: $(cat "$T/out")"; fi
run cancel "$sweep" --cell LR=0.9
expect_code 1
expect_err "no cell 'LR=0.9'"
run cancel "$sweep"
expect_code 0
expect_out "cell LR=0.2"
expect_out "cell LR=0.3"
expect_out "already ended (CANCELLED)"
deadline=$((SECONDS + 60))
while :; do
  run status
  grep -q "3 cells: 3 cancelled" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep is not 3 cancelled: $(cat "$T/out" "$T/err")"
  sleep 0.5
done
[ -z "$(own_live_jobs)" ] || fail "jobs still live after cancel: $(own_live_jobs)"
run sweep retry "$sweep" --dry-run
expect_code 0
expect_out "would retry shape 1x1: 3 cell(s), --array=0-2%2"
