#!/usr/bin/env bash
# Who hung it, with nothing installed: a Gloo job (2 nodes x 1 rank, Debian's
# python3-torch) whose rank 1 sleeps in a callback while rank 0 waits in
# all_reduce, with gdb and py-spy not usable on the nodes (fakes first on
# PATH that say "not found" and record being called). The ranks' own
# faulthandler (ddpctl's sitecustomize) gives the stacks, and the watchdog's
# cancel and status name rank 1 with its frame, and say how the stacks were
# taken. Skips where the nodes' Python has no torch (scripts/local-slurm
# installs python3-torch on every version's nodes: 1.13, 2.6, 2.14).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Asked on a node: the login host's Python is not the nodes' (24.11's and
# 26.05's nodes run in their chroots).
on_login srun -N 1 -n 1 -p cpu -t 1 -J "$JOB_NAME-probe" /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 ||
  skip "the nodes' /usr/bin/python3 cannot import torch (python3-torch)"
# The job inherits this PATH (sbatch's default --export=ALL).
# shellcheck disable=SC2016  # expanded when the fakes run
for tool in gdb py-spy; do fake_command "$tool" 'echo "$0 $*" >>"'"$T"'/tools-called"; echo "${0##*/}: not found" >&2; exit 127'; done
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
command: [/usr/bin/python3, $DDPCTL_SOURCE/tests/slurm/data/gloo_hang.py]
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
record="logs/${JOB_NAME}_$id.stall.json"
[ -s "$record" ] || fail "the watchdog left no record ($record): $(ls logs)"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$record" "$1"; }
line=$(grep -n 'time.sleep(3600)' "$DDPCTL_SOURCE/tests/slurm/data/gloo_hang.py" | cut -d: -f1)
culprit=$(field culprit)
echo "culprit: $culprit"
echo "stacks taken by: $(field stacks_by)"
[ "$(field culprit_named)" = True ] || fail "no culprit named: $culprit"$'\n'"$(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
grep -qE "^rank 1 \([^)]+\) is not in a collective — at gloo_hang.py:$line in on_step_end; rank 0 \([^)]+\) waits in all_reduce" <<<"$culprit" ||
  fail "the culprit is not rank 1 at gloo_hang.py:$line in on_step_end: $culprit"
[[ "$(field stacks_by)" == "faulthandler: ranks 0, 1 ("* ]] || fail "not every rank's stacks by faulthandler: $(field stacks_by)"
for stacks in logs/"${JOB_NAME}_$id".restart0.stacks.*.txt; do
  grep -qE '^## pid [0-9]+ \(rank [01]\), state .: faulthandler \(signal [0-9]+\)$' "$stacks" || fail "no faulthandler stacks in $stacks: $(cat "$stacks")"
done
# The fakes were there to be found, and nothing needed them.
[ ! -e "$T/tools-called" ] || ! grep -qv -- '--version' "$T/tools-called" || fail "gdb or py-spy attached: $(cat "$T/tools-called")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "was cancelled by the watchdog: stalled"
expect_out "is not in a collective — at gloo_hang.py:$line in on_step_end"
grep -qF "ddpctl: watchdog: cancelling job $id: stalled" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say why it was cancelled: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "stacks taken by faulthandler: ranks 0, 1" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say how the stacks were taken: $(cat "logs/${JOB_NAME}_$id.err")"
