#!/usr/bin/env bash
# restart: {in_job: 1, spares: 1}: the node check before the first step
# fails on g2 (its TCP to the rendezvous ports is dropped); no step runs
# there: g2 is left out, the spare is checked in its place, and the job
# trains and COMPLETES without a requeue; status says so.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
"$LOCAL_SLURM" node block-tcp g2 20000-29999 >/dev/null
at_exit "'$LOCAL_SLURM' node unblock g2"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
nodelist: g[1-2]
restart: {in_job: 1, spares: 1}
command: 'echo "training on \$(hostname) in step \$DDPCTL_RESTART"'
YAML
# nodelist: holds g1 and g2 in the allocation; sorted, they are the first
# step's nodes, and the third node is the spare.
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 120
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: node check: node g2 cannot reach" "logs/${JOB_NAME}_$id.err" ||
  fail "the node check did not fail on g2$(job_logs_of "$id")"
grep -qE "ddpctl: restart 1 of 1 in the job: the node check failed on g2; g2 left out, spare g[34] taken" \
  "logs/${JOB_NAME}_$id.err" || fail "the failed check did not take the spare$(job_logs_of "$id")"
if grep -q "training on g2" "logs/${JOB_NAME}_$id.restart0."*.out; then fail "a step ran on g2"; fi
grep -q "training on g[34] in step 1" "logs/${JOB_NAME}_$id.restart0.1.out" ||
  fail "the spare did not train: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
[ "$(cat "$T/states")" = COMPLETED ] || fail "job $id has more than one record: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out_re "restart 1 of 1 in the job: the node check failed on g2; g2 left out, spare g[34] taken"
