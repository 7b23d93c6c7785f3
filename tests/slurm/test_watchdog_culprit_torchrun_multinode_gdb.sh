#!/usr/bin/env bash
# The issue's first hang with gdb on the nodes (22.05: the host's
# /usr/bin/gdb; the chroots' own on 24.11 and 26.05): pytorch/examples'
# multinode.py (data/multinode.py, CPU and Gloo) launched by torchrun on each
# of 2 nodes x 2 ranks; rank 1 falls asleep at epoch 1 while the others wait
# in backward for DDP's gradient all_reduce. Every rank's stacks are taken
# both ways: its own faulthandler (the Python frames) and gdb (the native
# ones: DDP's Reducer, Gloo's waitRecv). The watchdog cancels it naming rank
# 1 at the sleep's line and the others waiting in backward; torchrun's
# agents are no rank, and gdb is not run on them. Skips where the nodes'
# Python has no torch.
# On one version: the stacks come from the nodes' gdb and torch, not from
# Slurm: gdb 16 with torch 2.14, the newest (Debian testing's, the likeliest to
# change); gdb 13 with torch 1.13 is recorded in tests/unit/data/stacks and
# run by 22.05's ddp-train tests; 24.11 runs the faulthandler twin.
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
need_node_torchrun
need_node_gdb
# gdb reads libtorch's symbols for seconds of CPU per rank: four at once on
# an idle 2-core machine took 13 s each after a 3 s probe, and CI runs four
# tests at once, another gdb test among them. 60 s was outrun there, and
# every rank's gdb was cut. The job gives them 240 s, as a site with large
# CUDA processes would (the job inherits it: sbatch's --export=ALL); the
# budget is a limit, not a wait: the dumps end when gdb does.
export DDPCTL_STACKS_BUDGET=240
program=$DDPCTL_SOURCE/tests/slurm/data/multinode.py
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
# Room for the stall, the stacks' budget and the cancel.
time: "10:00"
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
# gdb adds the native frame the sleep is in, "(clock_nanosleep)" or the like.
# Every rank is asked both ways; on a busy 2-core machine (three clusters'
# tests at once) a gdb of a torch 2 rank can run past the budget, so the
# culprit's own native frame is what must come from gdb.
expect_culprit "^rank 1 \([^)]+\) is not in a collective — at multinode.py:$line in _run_epoch \([^)]+\); ranks 0, 2, 3 \([^)]+\) wait in backward \(the gradient all_reduce\)$"
[[ "$(stall_field stacks_by)" == "faulthandler and gdb: ranks "* ]] ||
  fail "no rank's stacks both ways: $(stall_field stacks_by)"$'\n'"$stacks_of"
expect_sections "$id" faulthandler 4
expect_sections "$id" gdb 4
# gdb saw what faulthandler cannot: DDP waiting for its gradients' all_reduce, and Gloo for rank 1.
for want in 'c10d::Reducer::finalize_backward' 'gloo::transport::tcp::UnboundBuffer::waitRecv'; do
  grep -qF "$want" logs/"${JOB_NAME}_$id".restart0.stacks.*.txt || fail "no $want in gdb's stacks: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
done
if grep -qE '^## pid [0-9]+ \(task [01], launcher\), state .: gdb' logs/"${JOB_NAME}_$id".restart0.stacks.*.txt; then
  fail "gdb was run on torchrun's agent: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
fi
expect_status_culprit "is not in a collective — at multinode.py:$line in _run_epoch"
grep -qF "stacks taken by faulthandler and gdb: ranks " "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say how the stacks were taken: $(cat "logs/${JOB_NAME}_$id.err")"
