#!/usr/bin/env bash
# A race (hybrid mode) with restart: {in_job: 1, spares: 1}: the shapes of
# 2 and 1 nodes, each with its spare, cannot all start on the 4 cpu nodes;
# the first to start claims the group and cancels the other. Its rank 0 is
# then killed with SIGKILL: the winner restarts inside its job (rank 0's
# node left out, the spare taken) and COMPLETES. The claim stays the
# winner's through the restart: no generation is raced again, the loser is
# not submitted again and never trained, and status explains the restart on
# the winner's row.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/restart_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/restart_lib.sh"
write_step_program
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
wait_mid_training 0 "the race"
read -r pid node winner <pid.0.0
[ "$(cut -d' ' -f1 "$run_dir/race/claim/winner")" = "$winner" ] ||
  fail "job $winner trains but the claim names $(cat "$run_dir/race/claim/winner")"
kill -KILL "$pid"
wait_for_sacct "$winner" COMPLETED 120
echo "batch log: $(cat logs/*_"$winner".err)"
grep -qE "^ddpctl: restart 1 of 1 in the job: rank 0 on $node was killed \(signal 9\); $node left out, spare [a-z0-9]+ taken$" \
  logs/*_"$winner".err || fail "the winner did not restart in its job$(job_logs_of "$winner")"
grep -qE "^restart 1 rank 0 of job $winner .* from step ([3-9]|[1-9][0-9]+)$" logs/*_"$winner".restart0.0.out ||
  fail "the restarted step did not resume in the winner's job: $(cat logs/*_"$winner".restart0.0.out)"
# The claim is still the winner's, and the group was not raced again.
[ "$(cut -d' ' -f1 "$run_dir/race/claim/winner")" = "$winner" ] || fail "the claim changed: $(cat "$run_dir/race/claim/winner")"
[ ! -e "$run_dir/race/gen.2" ] || fail "the group was raced again: $(ls "$run_dir/race")"
# The other shape: one job, cancelled or stood down, never trained.
ids=$(cat "$run_dir"/race/jobs/* | tr '\n' ' ')
[ "$(wc -w <<<"$ids")" = 2 ] || fail "the race has jobs $ids, not one per shape"
for id in $ids; do
  [ "$id" = "$winner" ] && continue
  state=$(on_login sacct -n -X -P -j "$id" -o State | tail -n 1)
  case "$state" in CANCELLED* | COMPLETED) ;; *) fail "the losing shape's job $id ended $state" ;; esac
  if grep -l " $id$" pid.* 2>/dev/null; then fail "the losing shape's job $id trained"; fi
done
on_login sacct -n -X -P --duplicates -j "$winner" -o State >"$T/states"
grep -q REQUEUE "$T/states" && fail "the winner was requeued: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out_re "$winner +[^ ]+ +COMPLETED .*restart 1 of 1 in the job: rank 0 on $node was killed \(signal 9\); $node left out, spare [a-z0-9]+ taken"
