#!/usr/bin/env bash
# Who hung it, with nothing installed: the issue's second hang, a Hugging
# Face Trainer-shaped program (data/trainer_callback_hang.py: a training
# loop under DDP calling each callback's on_step_end through a
# CallbackHandler, CPU and Gloo, 2 nodes x 2 ranks, `progress: huggingface`
# over transformers 5's quoted log dicts) whose callback falls asleep on rank
# 1 at step 10, while the others wait in backward for DDP's gradient
# all_reduce. gdb and py-spy are not usable on the nodes (fakes first on PATH
# that say "not found" and record being called). The ranks' own faulthandler
# (ddpctl's sitecustomize) gives the stacks, and the watchdog's cancel and
# status name rank 1 in on_step_end, not the rank that printed last, and say
# how the stacks were taken. Skips where the nodes' Python has no torch.
# On one version: what differs is the nodes' Python and torch, not Slurm:
# torch 1.13 here; 24.11 runs the gdb twin (test_watchdog_culprit_trainer_callback_gdb).
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
hide_stack_tools
program=$DDPCTL_SOURCE/tests/slurm/data/trainer_callback_hang.py
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [/usr/bin/python3, $program]
progress: {preset: huggingface, epochs: 1}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
# Debian builds torch without libuv (2.6 on the 24.11 nodes, 2.14 on 26.05's).
env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_culprit "$id"
line=$(line_of "$program" "time.sleep(3600)  # the hang")
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at trainer_callback_hang.py:$line in on_step_end; ranks 0, 2, 3 \([^)]+\) wait in backward \(the gradient all_reduce\)$"
# The progress preset read rank 0's dicts: the stall is measured by them.
[ "$(stall_field basis)" = "the progress pattern" ] || fail "the stall was not measured by the huggingface preset: $(stall_field basis)"
[[ "$(stall_field stacks_by)" == "faulthandler: ranks 0, 1, 2, 3 ("* ]] || fail "not every rank's stacks by faulthandler: $(stall_field stacks_by)"
expect_sections "$id" faulthandler 4
expect_tools_unused
expect_status_culprit "is not in a collective — at trainer_callback_hang.py:$line in on_step_end"
grep -qF "ddpctl: watchdog: cancelling job $id: stalled" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say why it was cancelled: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "stacks taken by faulthandler: ranks 0, 1, 2, 3" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say how the stacks were taken: $(cat "logs/${JOB_NAME}_$id.err")"
