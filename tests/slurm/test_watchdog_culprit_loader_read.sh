#!/usr/bin/env bash
# A rank blocked in a data loader read while the others wait in all_reduce:
# data/loader_hang.py (CPU and Gloo, 2 nodes x 2 ranks, num_workers=0) whose
# rank 1's Dataset opens a FIFO nobody writes in __getitem__ at batch 5, as
# a read from a dead file server blocks. The watchdog cancels it naming rank
# 1 at the __getitem__ line, the others waiting in all_reduce. The nodes as
# they are (gdb where installed). Skips where the nodes' Python has no torch.
# On one version: what differs is the nodes' Python and torch, not Slurm, and
# each is run by one of the culprit scenarios (their stacks recorded in
# tests/unit/data/stacks): torch 1.13 here, 26.05 runs the worker twin.
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
program=$DDPCTL_SOURCE/tests/slurm/data/loader_hang.py
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [/usr/bin/python3, $program, --workers, "0"]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
# Debian builds torch without libuv (2.6 on the 24.11 nodes, 2.14 on 26.05's).
env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_culprit "$id"
line=$(line_of "$program" "with open(self.fifo) as f:  # the hang")
# With gdb on the nodes, the native frame of the blocked open() is added in parentheses.
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at loader_hang.py:$line in __getitem__( \([^)]+\))?; ranks 0, 2, 3 \([^)]+\) wait in all_reduce$"
expect_sections "$id" faulthandler 4
expect_status_culprit "is not in a collective — at loader_hang.py:$line in __getitem__"
