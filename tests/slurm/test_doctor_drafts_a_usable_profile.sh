#!/usr/bin/env bash
# doctor probes the cluster and writes a profile draft that gen can use.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir clusters
run doctor -o clusters/site.yaml --name site
expect_code 0
expect_err "Slurm version"
expect_err "$SLURM_VERSION"
expect_err "sacct (accounting)"
expect_err "MinJobAge"
expect_err "partition a100-80gb"
grep -q "a100-80gb: {nodes: 2, gpus_per_node: 4, gpu_types: \[a100\], cpus_per_node: 4" clusters/site.yaml ||
  fail "draft lacks a100-80gb: $(cat clusters/site.yaml)"
grep -q "default_partition: cpu" clusters/site.yaml || fail "draft lacks the default partition"
# The preemption contract (docs/profiles.md "Preemption"), as scripts/local-slurm
# sets it: scavenger's and spot's jobs are preempted by urgent's after 30 s
# of grace, with SIGTERM (no send_user_signal), scavenger's requeued, spot's
# cancelled; every other partition never.
grep -qE '^  scavenger: \{nodes: 4, .*, preemptible: \{mode: requeue, grace_time: 30, by: \[urgent\]\}\}$' clusters/site.yaml ||
  fail "draft lacks scavenger's preemption: $(cat clusters/site.yaml)"
grep -qE '^  spot: \{nodes: 4, .*, preemptible: \{mode: cancel, grace_time: 30, by: \[urgent\]\}\}$' clusters/site.yaml ||
  fail "draft lacks spot's preemption: $(cat clusters/site.yaml)"
[ "$(grep -c 'preemptible:' clusters/site.yaml)" -eq 2 ] || fail "draft has other partitions preemptible: $(cat clusters/site.yaml)"
grep -qxF 'preemption: {type: preempt/partition_prio, exempt_time: 0, user_signal: false}' clusters/site.yaml ||
  fail "draft lacks the site's preemption: $(cat clusters/site.yaml)"
expect_err "preempt/partition_prio, PreemptMode=REQUEUE, exempt for 0 s, SIGTERM at preemption (no send_user_signal)"
expect_err "preemptible: preempted by a job of urgent with SIGTERM, 30 s grace, then requeued"
export DDPCTL_CLUSTERS="$T/clusters"
cat >job.yaml <<'YAML'
name: drafted
cluster: site
partition: a100-80gb
gpu_type: a100
gpus_per_node: 4
time: "00:10:00"
command: "true"
YAML
run gen job.yaml --stdout
expect_code 0
expect_out "#SBATCH --gres=gpu:a100:4"
# The reader each document's meta picked.
run doctor
expect_err "readable: Slurm $SLURM_VERSION"
case "$SLURM_VERSION" in
  22.05) expect_err "read from sinfo --json of Slurm 22.05" ;;
  *) expect_err "read from scontrol show nodes --json of Slurm $SLURM_VERSION" ;;
esac
# How status asks for its jobs, seen with two held jobs queued: by id in
# --json where Slurm filters it, else through squeue -o (22.05).
for _ in 1 2; do on_login sbatch -H -p cpu -J "$JOB_NAME" -o /dev/null --wrap true >/dev/null; done
run doctor
expect_err "status asks for its jobs with"
case "$SLURM_VERSION" in
  22.05) expect_err "squeue -o --jobs=ID,... (this Slurm's --json lists every job whatever it is asked)" ;;
  *) expect_err "squeue --json --jobs=ID,... (Slurm filters" ;;
esac
