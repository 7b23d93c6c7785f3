#!/usr/bin/env bash
# The issue's first hang, with nothing installed on the nodes: pytorch/examples'
# multinode.py (data/multinode.py, CPU and Gloo) launched by torchrun on each
# of 2 nodes x 2 ranks; rank 1 falls asleep at epoch 1 while the others wait
# in backward for DDP's gradient all_reduce. gdb and py-spy are fakes that
# say "not found", so every rank's stacks come from its own faulthandler
# (ddpctl's sitecustomize), torchrun's agent included. The watchdog cancels
# it naming rank 1 at the sleep's line and the others waiting in backward;
# torchrun's agents (a launcher, no rank) are left out of the decision.
# Skips where the nodes' Python has no torch.
# On one version: what is tested is the nodes' Python and torch 2 under
# torchrun, not Slurm: torch 2.6 here; 26.05 (torch 2.14) runs the gdb twin,
# which asks faulthandler too.
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
need_node_torchrun
hide_stack_tools
program=$DDPCTL_SOURCE/tests/slurm/data/multinode.py
# torchrun as python3 -m (the nodes' own); torch 1.13's underscore flags,
# which torch 2 still takes; --redirects 2 --tee 2 as 1.13 on Python 3.11 needs.
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
command: >-
  /usr/bin/python3 -m torch.distributed.run --nnodes="\$NNODES" --node_rank="\$NODE_RANK"
  --nproc_per_node="\$NPROC_PER_NODE" --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT"
  --redirects 2 --tee 2 --monitor_interval 1 $program 1000 1000
progress: {pattern: 'Epoch (?P<epoch>\d+) \| Batchsize', epochs: 1000}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
# Debian builds torch without libuv (2.6 on the 24.11 nodes, 2.14 on
# 26.05's); torchrun's own stores need LIBUV_OFF for it (culprit_lib.sh).
env: {USE_LIBUV: "0", PYTHONPATH: "$LIBUV_OFF"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_culprit "$id"
line=$(line_of "$program" "time.sleep(3600)  # the hang")
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at multinode.py:$line in _run_epoch; ranks 0, 2, 3 \([^)]+\) wait in backward \(the gradient all_reduce\)$"
[[ "$(stall_field stacks_by)" == "faulthandler: ranks 0, 1, 2, 3 ("* ]] ||
  fail "not every rank's stacks by faulthandler, or more than the ranks: $(stall_field stacks_by)"
expect_sections "$id" faulthandler 4
# torchrun's agents answered too, each headed as its node's launcher.
grep -qE '^## pid [0-9]+ \(task 0, launcher\), state .: faulthandler' "logs/${JOB_NAME}_$id".restart0.stacks.*.txt ||
  fail "no launcher section: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
expect_tools_unused
expect_status_culprit "is not in a collective — at multinode.py:$line in _run_epoch; ranks 0, 2, 3"
grep -qF "stacks taken by faulthandler: ranks 0, 1, 2, 3" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say how the stacks were taken: $(cat "logs/${JOB_NAME}_$id.err")"
