#!/usr/bin/env bash
# Who hung a ddp-train job, from the trainer's own collective counters, with
# no gdb or py-spy on the nodes (fakes first on PATH that say "not found" and
# record being called): 2 nodes x 2 ranks, rank 1 stops before loading step
# 3's batch (--test-hang-at, the trainer's test hook) while the others wait
# for it in the gradient allreduce. The watchdog cancels the job, and its
# record, the batch log and status name rank 1: it left collective #N and
# never entered #N+1, where ranks 0, 2 and 3 wait.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
# The job inherits this PATH (sbatch's default --export=ALL).
# shellcheck disable=SC2016  # expanded when the fakes run
for tool in gdb py-spy; do fake_command "$tool" 'echo "$0 $*" >>"'"$T"'/tools-called"; echo "${0##*/}: not found" >&2; exit 127'; done
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
cpus_per_task: 2
mem: 1G
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 1
  batch_size: 16
  workers: 0
  extra_args: [--synthetic-size, "100000", --no-val, --test-hang-at, "1:3"]
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" CANCELLED 240
record="logs/${JOB_NAME}_$id.stall.json"
[ -s "$record" ] || fail "the watchdog left no record ($record): $(ls logs)"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$record" "$1"; }
culprit=$(field culprit)
echo "culprit: $culprit"
stacks=$(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)
[ "$(field culprit_named)" = True ] || fail "no culprit named: $culprit"$'\n'"$stacks"
re="^rank 1 \(([^)]+)\) never entered collective #([0-9]+) backward with the Reducer's gradient all_reduce — it left #([0-9]+), at \"epoch 1, step 3 of [0-9]+: loading a batch\" for [0-9]+ s; ranks 0, 2, 3 \([^)]+\) wait in #([0-9]+)$"
[[ $culprit =~ $re ]] || fail "the culprit is not rank 1, out of the gradient allreduce: $culprit"$'\n'"$stacks"
node=${BASH_REMATCH[1]} seq=${BASH_REMATCH[2]} left=${BASH_REMATCH[3]} waited=${BASH_REMATCH[4]}
if [ "$left" -ne $((seq - 1)) ] || [ "$waited" != "$seq" ]; then
  fail "rank 1 did not leave the collective just before the one the others wait in: $culprit"
fi
grep -qE '^pid [0-9]+: ddp-train: rank 1: epoch 1, step 3 of [0-9]+: loading a batch for [0-9]+ s; collectives: entered #[0-9]+ ' <<<"$stacks" ||
  fail "the stacks files hold no counted state of rank 1: $stacks"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stopped"]; sys.exit(0 if [x.get("rank") for x in s] == [1] else 1)' "$record" ||
  fail "the record's stopped ranks are not [1]: $(cat "$record")"
# The fakes were there to be found, and nothing needed them.
[ ! -e "$T/tools-called" ] || ! grep -qv -- '--version' "$T/tools-called" || fail "gdb or py-spy attached: $(cat "$T/tools-called")"
grep -qF "ddpctl: watchdog: cancelling job $id: stalled" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say why it was cancelled: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "rank 1 ($node) never entered collective #" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not name rank 1: $(cat "logs/${JOB_NAME}_$id.err")"
# Slurm's accounting has the end before squeue lets go of the job (COMPLETING).
wait_for_state "$JOB_NAME" CANCELLED 120
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "was cancelled by the watchdog: stalled"
expect_out "rank 1 ($node) never entered collective #"
# The run's events say it too (docs/json.md "Events"): stalled, naming rank
# 1 as the culprit, then the job's end with status's reason.
run events "$(basename "$(only_run_dir)")" --types stalled,ended
expect_code 0
python3 - "$T/out" "$id" <<'PY' || fail "the events do not name the hung rank: $(cat "$T/out")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l).get("job") == sys.argv[2]]
print("events:", [(e["type"], e.get("rank"), e.get("state")) for e in evs])
assert [e["type"] for e in evs] == ["stalled", "ended"], evs
assert evs[0]["rank"] == 1 and evs[0]["culprit"].startswith("rank 1 ("), evs[0]
assert evs[1]["state"] == "CANCELLED" and "cancelled by the watchdog: stalled" in evs[1]["reason"], evs[1]
PY
