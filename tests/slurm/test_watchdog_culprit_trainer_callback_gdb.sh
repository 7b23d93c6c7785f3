#!/usr/bin/env bash
# The issue's second hang with gdb on the nodes (22.05: the host's
# /usr/bin/gdb; the chroots' own on 24.11 and 26.05): a Hugging Face
# Trainer-shaped program (data/trainer_callback_hang.py, CPU and Gloo, 2
# nodes x 2 ranks, `progress: huggingface`) whose callback's on_step_end
# falls asleep on rank 1 at step 10 while the others wait in backward. Every
# rank's stacks are taken by its own faulthandler and by gdb, and the
# watchdog names rank 1 in on_step_end, the others in backward. Skips where
# the nodes' Python has no torch.
# On one version: what differs is the nodes' gdb and torch, not Slurm: torch
# 2.6 here; 22.05 runs the faulthandler twin
# (test_watchdog_names_culprit_by_faulthandler), 26.05 gdb in the torchrun test.
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
need_node_gdb
# gdb reads libtorch's symbols for seconds of CPU per rank: four at once on
# an idle 2-core machine took 13 s each after a 3 s probe, and CI runs four
# tests at once, another gdb test among them. 60 s was outrun there, and
# every rank's gdb was cut. The job gives them 240 s, as a site with large
# CUDA processes would (the job inherits it: sbatch's --export=ALL); the
# budget is a limit, not a wait: the dumps end when gdb does.
export DDPCTL_STACKS_BUDGET=240
program=$DDPCTL_SOURCE/tests/slurm/data/trainer_callback_hang.py
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
# Room for the stall, the stacks' budget and the cancel.
time: "10:00"
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
# gdb adds the native frame the sleep is in, "(clock_nanosleep)" or the like.
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at trainer_callback_hang.py:$line in on_step_end( \([^)]+\))?; ranks 0, 2, 3 \([^)]+\) wait in backward \(the gradient all_reduce\)$"
[[ "$(stall_field stacks_by)" == "faulthandler and gdb: ranks 0, 1, 2, 3 ("* ]] ||
  fail "not every rank's stacks both ways: $(stall_field stacks_by)"$'\n'"$stacks_of"
expect_sections "$id" faulthandler 4
expect_sections "$id" gdb 4
grep -qF 'c10d::Reducer::finalize_backward' logs/"${JOB_NAME}_$id".restart0.stacks.*.txt ||
  fail "gdb's stacks show no rank in DDP's finalize_backward: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
expect_status_culprit "is not in a collective — at trainer_callback_hang.py:$line in on_step_end"
