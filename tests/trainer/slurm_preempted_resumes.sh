#!/usr/bin/env bash
# The bundled trainer on 2 nodes of preemptible capacity, preempted for real
# (docs/running.md "When the site takes the nodes back"): a job of `urgent`
# (PriorityTier 10) takes the nodes of this job of `scavenger` (tier 1,
# PreemptMode=REQUEUE, 30 s grace; scripts/local-slurm). Slurm's SIGTERM
# reaches every rank; they stop at one step, rank 0 checkpoints, the
# launchers exit 75 and the script requeues the job within the grace. Once
# the urgent job is done and Slurm lets the requeued job start (its
# BeginTime: about two minutes), it resumes from the checkpoint and
# completes, having lost at most one step of its step counter; status and
# report say all of it. Before the preemption a rank is killed: the step
# starts again inside the job (restart: {in_job: 1}), so the run's account
# (report's and status's: what it used, training and lost) covers an
# in-job restart and a preemption, and must add up to sacct's elapsed x
# nodes over both attempts within 1%. The journey on 22.05's lane (the
# trainer's); the same contract is read on every version
# (test_doctor_drafts_a_usable_profile).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 2
requeue: {signal: USR1, grace: 20, max_restarts: 2}
restart: {in_job: 1}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 1
  batch_size: 16
  workers: 0
  checkpoint_dir: $T/ck
  resume: true
  extra_args: [--synthetic-size, "12800", --no-val]
YAML
run submit job.yaml --wait
expect_code 0
expect_err "runs on preemptible capacity (partition scavenger"
id=$(job_ids)
progress=logs/${JOB_NAME}_${id}.progress.json
deadline=$((SECONDS + 60)) since=$SECONDS
until grep -q '"phase": "training", "epoch": 1, "epochs": 1, "step": [1-9]' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "training never started: $(cat "$progress" 2>&1)$(slurmctld_log_of "$id")"
  pause_since "$since"
done
# The in-job restart: rank 1 killed; the step starts again on both nodes.
victim=$(rank_pid "$id" 1)
[ -n "$victim" ] || fail "no ddp-train process with RANK=1 of job $id"
kill -KILL "$victim"
err=logs/${JOB_NAME}_${id}.err
deadline=$((SECONDS + 90)) since=$SECONDS
until grep -qF "ddpctl: training step 1 on" "$err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no in-job restart after rank 1 was killed: $(cat "$err" 2>&1)"
  pause_since "$since"
done
# Training again in the new step before the preemption.
deadline=$((SECONDS + 60)) since=$SECONDS
until [ "$progress" -nt "$err" ] && grep -q '"phase": "training"' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the restarted step did not train: $(cat "$progress" "$err" 2>&1)"
  pause_since "$since"
done
urgent=$(on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 15')
at_exit "on_login scancel $urgent"
deadline=$((SECONDS + 90)) since=$SECONDS
until grep -qF "ddpctl: requeueing job $id (restart 1 of 2): after preemption" "$err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $id was not requeued after preemption: $(cat "$err" 2>&1)$(slurmctld_log_of "$id")"
  pause_since "$since"
done
# The urgent job runs, then this one starts again when Slurm lets it.
wait_for_state "$JOB_NAME" COMPLETED 300
first=logs/${JOB_NAME}_${id}.restart0.0.out
second=logs/${JOB_NAME}_${id}.restart1.0.out
grep -q "ddp-train: stop requested: checkpoint saved at epoch 1, step [0-9]*; exiting for requeue" "$first" ||
  fail "the first attempt did not checkpoint: $(cat "$first")"
stopped=$(sed -n 's/^ddp-train: stopped at global step \([0-9]*\)$/\1/p' "$first")
resumed=$(sed -n 's/^ddp-train: schedule: global step \([0-9]*\),.*/\1/p' "$second")
{ [ -n "$stopped" ] && [ -n "$resumed" ]; } || fail "no step counters: stopped '$stopped', resumed '$resumed': $(cat "$first" "$second")"
[ $((stopped - resumed)) -le 1 ] || fail "more than one step lost: stopped at $stopped, resumed from $resumed"
grep -q "^Epoch \[1/1\]" "$second" || fail "the second attempt did not finish: $(cat "$second")"
# One run across the preemption: one checkpoint folder, one metrics file.
[ -f "$T/ck/checkpoint.pt" ] || fail "no checkpoint in $T/ck: $(ls "$T/ck" 2>&1)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
grep -qE "^job $id used 0\.[0-9]+ node-h, 0\.[0-9]+ CPU-h over 2 attempt\(s\): [0-9]+% training" "$T/out" ||
  fail "status does not say what the run used: $(cat "$T/out")"
expect_out "MFU unknown: the site profile gives no peak_tflops for partition"
grep -qE "attempt 2 of 3 \(requeued after preemption: Slurm's SIGTERM stopped the training step.*; preempted by job $urgent \(partition urgent\) after [0-9]+s; resumed from global step $resumed \((no step|1 step) lost\)\)" "$T/out" ||
  fail "status does not say the preemption, its preemptor and the steps: $(cat "$T/out" "$T/err")"
run report "$JOB_NAME"
expect_code 0
echo "report: $(cat "$T/out")"
grep -qE "requeued 1 time \(1 after preemption\), [0-9hms]+ from a stop to the next start in all: attempt 2: after preemption" "$T/out" ||
  fail "report does not count the preemption: $(cat "$T/out" "$T/err")"
expect_out "used 0."
# What it used: both attempts, the restart and the preemption among the
# parts, which add up to sacct's elapsed x nodes within 1%.
run report "$JOB_NAME" --json
expect_code 0
cp "$T/out" report.json
/usr/bin/python3 "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" report.json >valid.out 2>&1 ||
  fail "report's document is not valid: $(cat valid.out)"
on_login sacct -n -X -P --duplicates -j "$id" -o ElapsedRaw,NNodes,State >sacct.out
/usr/bin/python3 - report.json sacct.out <<'PY' || fail "the account does not add up: $(cat report.json sacct.out)"
import json, sys
acc = json.load(open(sys.argv[1]))["rows"][0]["account"]
rows = [l.split("|") for l in open(sys.argv[2]).read().split("\n") if l]
slurm_node_h = sum(int(e) * int(n) for e, n, _ in rows) / 3600
print("account:", {p["key"]: round(p["node_h"] * 3600, 1) for p in acc["parts"]}, "of", round(acc["node_h"] * 3600, 1),
      "node-s; sacct:", round(slurm_node_h * 3600, 1))
assert acc["attempts"] == 2 == len(rows), (acc["attempts"], rows)
assert abs(acc["node_h"] - slurm_node_h) <= 0.01 * slurm_node_h, (acc["node_h"], slurm_node_h)
assert abs(sum(p["node_h"] for p in acc["parts"]) - slurm_node_h) <= 0.01 * slurm_node_h, acc["parts"]
keys = {p["key"]: p["node_h"] for p in acc["parts"]}
# (The node check takes milliseconds here: its part may round to none.)
for k in ("training", "restarts", "interrupted"):
    assert keys.get(k, 0) > 0, (k, keys)
assert acc["energy_kwh"] is None and acc["energy_note"].startswith("not recorded by this site"), acc
# ddp-train wrote its FLOPs; the local profile's CPU nodes have no peak: unknown, and why.
row = json.load(open(sys.argv[1]))["rows"][0]
assert row["flops_per_sample"] > 0 and row["mfu"] is None and acc["mfu"] is None, row
assert "gives no peak_tflops for partition" in acc["mfu_words"] and acc["mfu_words"] == row["mfu_words"], row
# Each rank's share: its node from its samples, how busy its CPUs were; the
# shares add up to the step's part of the allocation (all but idle spares).
ranks = acc["ranks"]
assert len(ranks) == row["ranks"] and all(r["node"] and r["busy_pct"] is not None for r in ranks), ranks
step_h = sum(p["node_h"] for p in acc["parts"] if p["key"] != "idle")
assert abs(sum(r["node_h"] for r in ranks) - step_h) <= 1e-9 + 0.001 * step_h, (ranks, step_h)
PY
# The same story in the run's events (docs/json.md "Events"), in order:
# started, preempted, requeued, started again, resumed from the checkpoint
# in $T/ck, ended.
run events "$(basename "$(only_run_dir)")"
expect_code 0
python3 - "$T/out" "$id" "$T/ck" <<'PY' || fail "the events do not tell the preemption: $(cat "$T/out")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
job, ck = sys.argv[2], sys.argv[3]
mine = [e for e in evs if e.get("job") == job and e["type"] in ("started", "preempted", "requeued", "resumed", "ended")]
story = [(e["type"], e.get("attempt")) for e in mine]
print("events:", story)
want = [("started", 0), ("preempted", 0), ("requeued", 0), ("started", 1), ("resumed", 1), ("ended", None)]
it = iter(story)
missing = [w for w in want if not any(w[0] == t and (w[1] is None or w[1] == a) for t, a in it)]
assert not missing, f"missing or out of order: {missing}"
by = {e["type"]: e for e in mine}
assert "after preemption" in by["requeued"]["reason"], by["requeued"]
assert by["resumed"]["checkpoint"].startswith(ck), by["resumed"]
assert mine[-1]["type"] == "ended" and mine[-1]["state"] == "COMPLETED", mine[-1]
PY
echo "preempted at global step $stopped, resumed from $resumed, by job $urgent"
