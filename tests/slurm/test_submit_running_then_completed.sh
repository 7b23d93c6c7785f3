#!/usr/bin/env bash
# submit -> status shows RUNNING -> status shows COMPLETED, on the real cluster.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The job runs until the test has seen it running (a job of a fixed few
# seconds could end between two polls on a loaded machine), then ends.
write_spec job.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
account: lusu
command: 'while [ ! -e $T/finish ]; do sleep 0.2; done; echo done'
YAML
run submit job.yaml
expect_code 0
expect_out "submitted job"
run_id=$(basename "$(only_run_dir)")
wait_for_state "$run_id" RUNNING 60
run status "$run_id"
expect_code 0
expect_out "RUNNING"
expect_out "/5m00s"
touch "$T/finish"
wait_for_state "$run_id" COMPLETED 60
run status
expect_code 0
expect_out "$run_id"
expect_out "COMPLETED"
