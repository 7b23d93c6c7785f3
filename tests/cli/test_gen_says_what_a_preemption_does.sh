#!/usr/bin/env bash
# A shape on preemptible capacity (docs/profiles.md "Preemption"): gen says,
# before anything is queued, what the profile's contract does to it, for
# each shape that runs there and none other; a partition whose terms the
# profile does not know says so and how to read them.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cat >job.yaml <<'YAML'
name: p
cluster: local
partition: scavenger
gpus_per_node: 0
procs_per_node: 1
command: "true"
alternatives:
  - {partition: cpu, label: normal}
YAML
run gen job.yaml --stdout
expect_code 0
expect_err "ddpctl: note: shape 1x1 runs on preemptible capacity (partition scavenger, profile local): preempted by a job of urgent with SIGTERM, 30 s grace, then SIGKILL; requeued (the same job id starts again from its script)"
! grep -q "shape normal" "$T/err" || fail "the shape on partition cpu was said to be preemptible: $(cat "$T/err")"
# preemptible: true, the terms unknown; and cancel.
mkdir -p clusters
sed 's/preemptible: {mode: requeue, grace_time: 30, by: \[urgent\]}/preemptible: true/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >clusters/local.yaml
export DDPCTL_CLUSTERS="$T/clusters"
run gen job.yaml --stdout
expect_code 0
expect_err "shape 1x1 runs on preemptible capacity (partition scavenger, profile local): the profile does not say how (run \`ddpctl doctor\` at the site to read it)"
sed 's/mode: requeue, grace_time: 30/mode: cancel, grace_time: 60/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >clusters/local.yaml
run gen job.yaml --stdout
expect_code 0
expect_err "with SIGTERM, 60 s grace, then SIGKILL; cancelled: the job ends there and is not run again"
# With requeue:, ddpctl's own requeue within the grace comes first.
echo "requeue: {grace: 30}" >>job.yaml
run gen job.yaml --stdout
expect_code 0
expect_err "then SIGKILL; cancelled, unless ddpctl requeues it first: with requeue:, the script requeues the job within the grace once the training step checkpointed and stopped"
echo ok
