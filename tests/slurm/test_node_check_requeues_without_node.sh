#!/usr/bin/env bash
# With requeue on, a job whose node check fails on one node is requeued
# excluding that node (ExcNodeList), and its next attempt trains on other
# nodes and completes; status says why the attempt was requeued.
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
command: 'echo "training on \$(hostname)"'
requeue: {max_restarts: 1, grace: 30}
YAML
# The first attempt must get g2: nodelist asks for it; the requeue then
# has to drop g2 from the job's node list too (Slurm cannot exclude a
# required node), which ddpctl does.
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_completed_after_requeue "$id" 120
cat "logs/${JOB_NAME}_$id.err"
grep -qF "ddpctl: requeueing job $id (restart 1 of 1): by the node check: node g2 cannot reach" "logs/${JOB_NAME}_$id.err" ||
  fail "the first attempt was not requeued by the node check"
on_login scontrol show job -o "$id" >"$T/job"
grep -qE "ExcNodeList=g2( |$)" "$T/job" || fail "g2 is not excluded: $(cat "$T/job")"
grep -q "training on g2" "logs/${JOB_NAME}_$id.restart1."*.out && fail "the second attempt ran on g2"
grep -q "training on" "logs/${JOB_NAME}_$id.restart1.1.out" || fail "the second attempt did not train: $(ls logs)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "COMPLETED"
expect_out "attempt 2 of 2 (requeued by the node check: node g2 cannot reach"
expect_out "excluding g2"
