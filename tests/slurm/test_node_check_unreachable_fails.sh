#!/usr/bin/env bash
# A node that cannot reach the rendezvous port (its outgoing TCP to the
# master port range dropped in its network namespace, as a broken fabric
# route would): the node check before training names that node and the job
# ends in seconds, not at the rendezvous timeout.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Every node but the first one of the job drops it: rank 0's node only listens.
for n in g2 g3 g4; do
  "$LOCAL_SLURM" node block-tcp "$n" 20000-29999 >/dev/null
  at_exit "'$LOCAL_SLURM' node unblock $n"
done
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
nodelist: g1
command: "echo training; sleep 600"
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" FAILED 120
on_login sacct -n -X -P -j "$id" -o ElapsedRaw,NodeList >"$T/acct"
read -r elapsed nodes < <(tr '|' ' ' <"$T/acct")
second=$(on_login scontrol show hostnames "$nodes" | grep -vx g1)
echo "job $id on $nodes ended after $elapsed s"
[ "$elapsed" -lt 30 ] || fail "the job took $elapsed s to fail (the check's deadline is 10 s)"
grep -qF training "logs/${JOB_NAME}_$id.restart0.0.out" 2>/dev/null && fail "training started despite the failed check"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "FAILED"
expect_out "failed the node check on $second before training: node $second cannot reach"
expect_out "over ib0 (g1, rank 0's node): connection timed out after 10s"
