#!/usr/bin/env bash
# The Flight Recorder names who hung it where the stacks cannot: a Gloo job
# (2 nodes x 1 rank, the nodes' python3-torch) whose rank 1 sleeps in a
# callback while rank 0 waits in all_reduce; no stacks can be taken (gdb and
# py-spy are fakes that say "not found", and the ranks start with the stacks
# signal ignored, so ddpctl's faulthandler stays out). Before it cancels, the
# watchdog has each node's agent write to its ranks' dump pipes, collects the
# dumps from <log base>.restart0.fr/ and names rank 1 by them.
# Where the nodes' torch has no Flight Recorder (torch._C._distributed_c10d.
# _dump_fr_trace; 22.05's nodes have Debian 12's torch 1.13), the same hang
# degrades as it must: no pipe, the record and status say so, the job is
# still cancelled. Skips where the nodes' Python has no torch at all.
# On two versions (22.05's torch 1.13 has no Flight Recorder (the degraded path); 26.05's
# torch 2.14 has one, as 24.11's 2.6 does):
# slurm versions: 22.05 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Asked on a node: the login host's Python is not the nodes' (24.11's and
# 26.05's nodes run in their chroots).
probe() { on_login srun -N 1 -n 1 -p cpu -t 1 -J "$JOB_NAME-probe" /usr/bin/python3 -c "$1" >/dev/null 2>&1; }
probe 'import torch' || skip "the nodes' /usr/bin/python3 cannot import torch (python3-torch)"
has_fr=0
probe 'import torch._C._distributed_c10d as c; c._dump_fr_trace' && has_fr=1
echo "the nodes' torch has the Flight Recorder: $has_fr"
# The job inherits this PATH (sbatch's default --export=ALL).
# shellcheck disable=SC2016  # expanded when the fakes run
for tool in gdb py-spy; do fake_command "$tool" 'echo "${0##*/}: not found" >&2; exit 127'; done
# The stacks signal, as the hook the job will write has it.
hook=$("$DDPCTL" job python-hook --log-base "$T/probe")
sig=$(sed -n 's/^    _ddpctl_stacks_hook(\([0-9]*\))$/\1/p' "$hook/sitecustomize.py")
[ -n "$sig" ] || fail "no stacks signal in the hook"
prog=$DDPCTL_SOURCE/tests/slurm/data/gloo_hang.py
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
command: [/bin/bash, -c, "trap '' $sig; exec /usr/bin/python3 $prog"]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
# Debian builds torch without libuv (2.6 on the 24.11 nodes, 2.14 on 26.05's).
env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" CANCELLED 180
base="logs/${JOB_NAME}_$id"
record="$base.stall.json"
[ -s "$record" ] || fail "the watchdog left no record ($record): $(ls logs)"$'\n'"$(cat "$base.err")"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$record" "$1"; }
# What a failure prints: the pipes and dumps with their times (a pipe's is
# when it was asked), the nodes' stacks files, the batch log's watchdog lines.
evidence() {
  echo
  ls -l --time-style=full-iso "$base.restart0.fr" 2>&1
  cat "$base".restart0.stacks.*.txt 2>&1
  grep -F 'watchdog' "$base.err" 2>&1
}
echo "flight recorder: $(field flight_recorder_count): $(field flight_recorder)"
echo "culprit by the stacks: $(field culprit)"
[ "$(field culprit_named)" = False ] || fail "the stacks named a culprit; they were meant not to: $(field culprit)"
[ -d "$base.restart0.fr" ] || fail "no Flight Recorder folder $base.restart0.fr"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "was cancelled by the watchdog: stalled"

if [ "$has_fr" = 0 ]; then
  [ "$(field flight_recorder)" = "no dumps: no rank has a dump pipe (its torch has no Flight Recorder, as 1.13, or no process group yet)" ] ||
    fail "without a Flight Recorder: $(field flight_recorder)"
  [ "$(field flight_recorder_named)" = False ] || fail "a culprit named without dumps"
  [ -z "$(find "$base.restart0.fr" -name 'rank_*')" ] || fail "dumps without a Flight Recorder: $(ls "$base.restart0.fr")"
  grep -qF "ddpctl: watchdog: flight recorder: no dumps: no rank has a dump pipe" "$base.err" ||
    fail "the batch log does not say why there are no dumps: $(cat "$base.err")"
  exit 0
fi

line=$(grep -n 'dist.all_reduce(x)' "$prog" | cut -d: -f1)
[ "$(field flight_recorder_count)" = "2 of 2 ranks dumped" ] || fail "dumps: $(field flight_recorder_count)$(evidence)"
[ "$(field flight_recorder_named)" = True ] || fail "the Flight Recorder named nobody: $(field flight_recorder)$(evidence)"
grep -qE "^rank 1 \([^)]+\) never entered all_reduce #[0-9]+ \(process group 0\); rank 0 \([^)]+\) is in it \(at gloo_hang.py:$line in main\)$" \
  <<<"$(field flight_recorder)" || fail "not rank 1 named by the Flight Recorder: $(field flight_recorder)"
for r in 0 1; do
  [ -s "$base.restart0.fr/rank_$r" ] || fail "no dump of rank $r: $(ls -l "$base.restart0.fr")"
  [ -p "$base.restart0.fr/pipe_$r.pipe" ] || fail "no pipe of rank $r: $(ls -l "$base.restart0.fr")"
done
for stacks in "$base".restart0.stacks.*.txt; do
  grep -qE '^rank [01]: asked$' "$stacks" || fail "the node's agent did not ask its rank: $(cat "$stacks")"
done
# What the status line starts with (the table cuts the rest; describe_stall's unit tests read it whole).
expect_out "was cancelled by the watchdog: stalled"
grep -qE "stalled [0-9]+s: rank 1 \([^)]+\) never entered all_reduce #" "$T/out" ||
  fail "status does not name rank 1 by the Flight Recorder: $(cat "$T/out")"
grep -qF "ddpctl: watchdog: flight recorder: 2 of 2 ranks dumped: rank 1 (" "$base.err" ||
  fail "the batch log does not count the dumps: $(cat "$base.err")"
grep -qF "ddpctl: watchdog: cancelling job $id: stalled" "$base.err" ||
  fail "the batch log does not say why it was cancelled: $(cat "$base.err")"
