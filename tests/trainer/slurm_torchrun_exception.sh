#!/usr/bin/env bash
# A Python exception in rank 2 of 4 of a torchrun program (2 nodes x 2):
# the other ranks then fail on its closed connection, and srun may report
# node 1's task first; status, submit --follow and logs still name rank 2,
# its node and its exception.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
need_torchrun
# Debian's torch 1.13 on Python 3.11: underscore flags, and --redirects/--tee
# set to 1 or 2 (its default, 0, and 3 both fail there).
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
command: >-
  $torchrun --nnodes="\$NNODES" --node_rank="\$NODE_RANK" --nproc_per_node="\$NPROC_PER_NODE"
  --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT" --redirects 2 --tee 2 --monitor_interval 1
  $DDPCTL_SOURCE/tests/trainer/torchrun_program.py --fail-rank 2
YAML
run submit job.yaml --follow
expect_code 1
id=$(submitted_job_id)
expect_err "ddpctl: error: job $id ended FAILED: rank 2 (task 1) on g2 exited with exit code 1: ValueError: bad batch on rank 2 of 4; see \`ddpctl logs "
expect_err "\` (it opens rank 2)"
run status "$JOB_NAME"
expect_code 0
grep -qE " FAILED +[0-9]+s/5m00s +g\[1-2\] +0 +rank 2 \(task 1\) on g2 exited with exit code 1: ValueError: bad batch on rank 2 of 4$" "$T/out" ||
  fail "status does not name rank 2: $(cat "$T/out")"
run status "$JOB_NAME" --json
expect_out '"rank": 2'
expect_out '"node": "g2"'
expect_out '"line": "ValueError: bad batch on rank 2 of 4"'
run logs "$JOB_NAME"
expect_code 0
expect_out "==> job $id ended FAILED: rank 2 (task 1) on g2 exited with exit code 1: ValueError: bad batch on rank 2 of 4; showing rank 2's output (--rank picks another) <=="
expect_out "${JOB_NAME}_$id.restart0.1.out (training output, attempt 1, task 1) <=="
expect_out "[default0]:ValueError: bad batch on rank 2 of 4"
