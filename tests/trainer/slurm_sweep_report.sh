#!/usr/bin/env bash
# A 3-shape sweep (1x1, 1x2, 2x1) of the bundled trainer on the local
# cluster, one run at a time, then `ddpctl report` of the experiment: every
# number it prints is checked against the metrics files and sacct; the
# formats, the plot and `ddpctl plan` come from the same rows.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
# The sweep's jobs are named <name>-<shape>.
sweep_ids() { on_login squeue -h -a -o "%i %j" | awk -v p="$JOB_NAME-" 'index($2, p) == 1 {print $1}'; }
# shellcheck disable=SC2016  # expanded when the test ends
at_exit 'on_login scancel $(sweep_ids)'
write_spec sweep.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 1G
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 3
  batch_size: 16
  workers: 0
  extra_args: [--synthetic-size, "640", --image-size, "32", --rendezvous-timeout, "60"]
sweep:
  - {nodes: 1, procs_per_node: 1}
  - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}
  - {nodes: 2, procs_per_node: 1}
YAML
run sweep sweep.yaml --one-at-a-time
expect_code 0
expect_out "shape 1x1: submitted job"
expect_out "(starts after job"
expect_out "experiment $JOB_NAME-"
[ "$(find "$DDPCTL_RUNS/experiments" -name '*.json' | wc -l)" = 1 ] || fail "no experiment record"
# submit refuses a sweep spec without --shape; a re-run does not duplicate.
run submit sweep.yaml
expect_code 1
expect_err "this spec is a sweep: \`ddpctl sweep\` submits one run per shape"
run sweep sweep.yaml
expect_code 0
expect_out "already submitted"
[ "$(sweep_ids | wc -l)" -le 3 ] || fail "re-running the sweep submitted again: $(sweep_ids)"

deadline=$((SECONDS + 300))
while [ -n "$(sweep_ids)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not finish within 300 s: $(on_login squeue -a)"
  sleep 0.5
done
run status "$JOB_NAME"
expect_code 0
[ "$(grep -c COMPLETED "$T/out")" = 3 ] || fail "not every run completed: $(cat "$T/out")"

run report "$JOB_NAME" --format json
expect_code 0
cp "$T/out" report.json
# Every number against the metrics files and sacct, recomputed here.
python3 - "$T" <<'PY' || fail "the report disagrees with the metrics files: $(cat report.json)"
import json, sys
t = sys.argv[1]
rows = json.load(open(f"{t}/report.json"))
assert [r["shape"] for r in rows] == ["1x1", "1x2", "2x1"], rows
base = None
for r in rows:
    lines = [json.loads(l) for l in open(r["metrics"]) if l.strip()]
    assert len(lines) == 3 and r["epochs_done"] == 3, (r, lines)
    thr = sum(l["img_per_s"] for l in lines[1:]) / 2
    assert abs(r["img_per_s"] - thr) < 1e-6 * thr, (r["img_per_s"], thr)
    last = lines[-1]
    assert abs(r["train_loss"] - last["train_loss"]) < 1e-9 and abs(r["val_loss"] - last["val_loss"]) < 1e-9
    assert abs(r["val_acc"] - last["val_acc"]) < 1e-9 and abs(r["train_acc"] - last["train_acc"]) < 1e-9
    assert r["mem0_mib"]["peak"] == last["rank0_mem_mib"]["peak"]
    assert r["mem0_mib"]["mode"] == last["rank0_mem_mib"]["mode"]
    assert r["mem_max_mib"] == max(last["peak_mem_mib"]) and len(last["peak_mem_mib"]) == r["ranks"]
    assert r["first_step_s"] == lines[0]["first_step_s"] and r["rendezvous_s"] == lines[0]["rendezvous_s"]
    if base is None:
        base = r
    speedup = r["img_per_s"] / base["img_per_s"]
    assert abs(r["speedup"] - speedup) < 1e-9 and abs(r["efficiency"] - speedup / r["ranks"]) < 1e-9, r
    assert r["wall_source"] == "slurm" and r["state"] == "COMPLETED", r
    assert abs(r["node_hours"] - r["wall_s"] / 3600 * r["nodes"]) < 1e-9 and r["gpu_hours"] is None, r
print("report matches the metrics files for", len(rows), "shapes")
PY
# Wall times against sacct's Elapsed.
ids=$(python3 -c "import json; print(','.join(r['job'] for r in json.load(open('report.json'))))")
on_login sacct -n -X -P -o JobID,ElapsedRaw -j "$ids" >elapsed.txt
python3 - "$T" <<'PY' || fail "wall times differ from sacct: $(cat elapsed.txt)"
import json, sys
t = sys.argv[1]
rows = json.load(open(f"{t}/report.json"))
elapsed = dict(l.strip().split("|") for l in open(f"{t}/elapsed.txt") if l.strip())
for r in rows:
    assert abs(r["wall_s"] - int(elapsed[r["job"]])) <= 1, (r["wall_s"], elapsed[r["job"]])
PY

run report "$JOB_NAME"
expect_code 0
expect_out "SHAPE  RUN"
expect_out "memory: peak resident set size per rank (CPU), MiB"
run report "$JOB_NAME" --format markdown
expect_code 0
expect_out "| 1 node × 2 ranks | 2 | 0 |"
expect_out "| 2 nodes × 1 rank | 2 | 0 |"
run report "$JOB_NAME" --format csv
expect_code 0
[ "$(wc -l <"$T/out")" = 4 ] || fail "CSV is not a header and 3 rows: $(cat "$T/out")"
run report "$JOB_NAME" --format yaml
expect_code 1
expect_err "--format: 'yaml': one of table, markdown, csv, json"
run report "$JOB_NAME" --plot "$T/scaling.svg"
expect_code 0
grep -q "<svg" scaling.svg || fail "scaling.svg is not SVG: $(head -c 300 scaling.svg)"
grep -q "Parallel efficiency per shape" scaling.svg || fail "the plot lacks the efficiency panel"
run report "$JOB_NAME" --plot "$T/scaling.png"
expect_code 0
[ "$(head -c 4 scaling.png | tail -c 3)" = PNG ] || fail "scaling.png is not a PNG"

run plan sweep.yaml --epochs 30
expect_code 0
expect_out "plan for sweep.yaml (30 epochs), from 3 measured run(s); baseline shape 1x1"
grep -Eq '^  1x2 +2 +0 +[0-9]+% +measured' "$T/out" || fail "plan does not use 1x2's measured efficiency: $(cat "$T/out")"
expect_out "fastest: "
expect_out "cheapest: "
