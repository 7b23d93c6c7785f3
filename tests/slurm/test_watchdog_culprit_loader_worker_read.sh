#!/usr/bin/env bash
# A rank blocked in a DataLoader worker's read while the others wait in
# all_reduce: data/loader_hang.py (CPU and Gloo, 2 nodes x 2 ranks,
# num_workers=2) whose rank 1's Dataset opens a FIFO nobody writes in
# __getitem__ at batch 5, in one of rank 1's worker processes, while rank
# 1's own process waits for that batch. Each worker (a forked child carrying
# its rank's RANK) answers faulthandler for itself and is listed as its
# rank's child, not as a rank: the watchdog names rank 1 waiting for its
# DataLoader and the worker blocked in __getitem__, the others waiting in
# all_reduce, and no rank's idle workers. The nodes as they are (gdb where
# installed). Skips where the nodes' Python has no torch.
# On one version: what differs is the nodes' Python and torch, not Slurm;
# Python 3.14's forkserver is what this one is about (torch 2.14); 22.05
# runs the in-process twin.
# slurm versions: 26.05
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
command: [/usr/bin/python3, $program, --workers, "2"]
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
loop=$(line_of "$program" "for step, batch in enumerate(loader):")
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at loader_hang.py:$loop in main \(waits for its DataLoader: worker pid [0-9]+ at loader_hang.py:$line in __getitem__\); ranks 0, 2, 3 \([^)]+\) wait in all_reduce$"
# Every rank's two workers answered for themselves, as their rank's children
# (with Python 3.14's forkserver, children of the rank's forkserver, which
# is its child too).
workers=$(awk '/^## / { if (child && loop) n++; child = /^## pid [0-9]+ \(rank [0-3], child of pid [0-9]+\), state .: faulthandler \(signal [0-9]+\)$/; loop = 0 }
  /in _worker_loop$/ { loop = 1 }
  END { if (child && loop) n++; print n + 0 }' logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)
[ "$workers" -eq 8 ] || fail "$workers DataLoader workers answered as their ranks' children, not 8: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
expect_sections "$id" faulthandler 4
# Each rank once, whichever ways its stacks were taken (under load a gdb can
# run out of time on one rank: "faulthandler and gdb: ranks 0, 1, 2 (g1,
# g2); faulthandler: rank 3 (g2)").
[ "$(stacks_by_ranks)" = "0 1 2 3" ] || fail "not ranks 0-3 once each (the workers counted as ranks?): $(stall_field stacks_by)"
expect_status_culprit "is not in a collective — at loader_hang.py:$loop in main (waits for its DataLoader: worker pid"
