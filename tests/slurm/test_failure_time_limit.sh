#!/usr/bin/env bash
# A job that reaches its time limit without a requeue: status, submit
# --follow and the JSON say so in Slurm's words. Slurm's shortest limit is a
# minute, and it checks limits every 30 s or so: this test takes 1-2 minutes.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
{
  echo "name: $JOB_NAME"
  echo "cluster: local"
  echo 'time: "00:01:00"'
  echo "partition: cpu"
  echo "gpus_per_node: 0"
  echo "procs_per_node: 1"
  echo 'command: "echo training; sleep 600"'
} >job.yaml
run submit job.yaml --follow
expect_code 1
id=$(submitted_job_id)
expect_out "job $id: TIMEOUT"
expect_err "ddpctl: error: job $id ended TIMEOUT: reached its time limit (not requeued): *** JOB $id ON g1 CANCELLED AT "
expect_err " DUE TO TIME LIMIT ***"
run status "$JOB_NAME"
expect_code 0
expect_out "TIMEOUT"
expect_out "reached its time limit (not requeued): *** JOB $id ON g1 CANCELLED AT "
run status "$JOB_NAME" --json
expect_out '"what": "reached its time limit (not requeued)"'
