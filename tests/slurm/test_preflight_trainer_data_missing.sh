#!/usr/bin/env bash
# A trainer.data folder that does not exist is refused at submit, at the
# spec's line (ddp-train would refuse it one second after the queue wait);
# --no-preflight submits anyway, and data: synthetic needs no folder.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
hold: true
trainer:
  model: smallcnn
  data: tiny-imagenet
  epochs: 1
YAML
run submit job.yaml
expect_code 1
expect_err "job.yaml:11"
expect_err "trainer.data"
expect_err "tiny-imagenet does not exist (from $T)"
expect_nothing_submitted
mkdir "$T/tiny-imagenet"
run submit job.yaml --dry-run
expect_code 0
rmdir "$T/tiny-imagenet"
# Held: the job is not meant to run, only to be queued.
run submit job.yaml --no-preflight
expect_code 0
id=$(submitted_job_id)
[ "$(on_login squeue -h -j "$id" -o %r)" = JobHeldUser ] || fail "job $id is not held: $(on_login squeue -h -j "$id" -o '%T %r')"
