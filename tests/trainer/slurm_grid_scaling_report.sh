#!/usr/bin/env bash
# The scaling sweep as a grid (shapes are one more axis of it): an include:
# of three shapes (1x1, 1x2, 2x1) of the bundled trainer with max_parallel: 1,
# submitted as three job arrays that run one after another (each afterany of
# the one before: no two cells overlap, checked from sacct's times); then
# `ddpctl report SWEEP`: the scaling table of the `sweep:` list's report, a
# row per cell, every number checked against its task's metrics file and
# sacct; the formats, the plot and `ddpctl plan` of the grid spec.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
# The grid's arrays are named as the spec.
sweep_ids() { on_login squeue -h -a -o "%i %j" | awk -v n="$JOB_NAME" '$2 == n {print $1}'; }
# shellcheck disable=SC2016  # expanded when the test ends
at_exit 'on_login scancel $(sweep_ids)'
write_spec grid.yaml <<YAML
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
grid:
  include:
    - {nodes: 1, procs_per_node: 1}
    - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}
    - {nodes: 2, procs_per_node: 1}
  max_parallel: 1
YAML
run sweep grid.yaml
expect_code 0
expect_out "shape 1x1: submitted job array"
first=$(sed -n 's/^shape 1x1: submitted job array \([0-9]*\) .*/\1/p' "$T/out")
second=$(sed -n 's/^shape 1x2: submitted job array \([0-9]*\) .*/\1/p' "$T/out")
if [ -z "$first" ] || [ -z "$second" ]; then fail "the sweep did not say its arrays: $(cat "$T/out")"; fi
expect_out "shape 1x2: submitted job array $second (1 cell(s), --array=1%1, starts after job array $first ends)"
expect_out "starts after job array $second ends)"
expect_out "3 cell(s) in 3 array(s)"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")

deadline=$((SECONDS + 360))
while [ -n "$(sweep_ids)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not finish within 360 s: $(on_login squeue -a)"
  sleep 0.5
done
run status "$sweep"
expect_code 0
[ "$(grep -c COMPLETED "$T/out")" = 3 ] || fail "not every cell completed: $(cat "$T/out")"

run report "$sweep" --format json
expect_code 0
cp "$T/out" report.json
# Every number against the task's metrics file, recomputed here.
python3 - "$T" <<'PY' || fail "the report disagrees with the metrics files: $(cat report.json)"
import json, sys
t = sys.argv[1]
rows = json.load(open(f"{t}/report.json"))
assert [r["shape"] for r in rows] == ["1x1", "1x2", "2x1"], rows
assert [r["ranks"] for r in rows] == [1, 2, 2], rows
base = None
for i, r in enumerate(rows):
    assert r["job"].endswith(f"_{i}"), r["job"]  # the task as Slurm shows it: <array>_<cell index>
    lines = [json.loads(l) for l in open(r["metrics"]) if l.strip()]
    assert len(lines) == 3 and r["epochs_done"] == 3, (r, lines)
    assert lines[-1]["world_size"] == r["ranks"], (r, lines[-1])
    thr = sum(l["img_per_s"] for l in lines[1:]) / 2
    assert abs(r["img_per_s"] - thr) < 1e-6 * thr, (r["img_per_s"], thr)
    last = lines[-1]
    assert abs(r["train_loss"] - last["train_loss"]) < 1e-9 and abs(r["val_loss"] - last["val_loss"]) < 1e-9
    assert r["mem0_mib"]["peak"] == last["rank0_mem_mib"]["peak"]
    assert r["mem_max_mib"] == max(last["peak_mem_mib"]) and len(last["peak_mem_mib"]) == r["ranks"]
    assert r["first_step_s"] == lines[0]["first_step_s"] and r["rendezvous_s"] == lines[0]["rendezvous_s"]
    if base is None:
        base = r
    speedup = r["img_per_s"] / base["img_per_s"]
    assert abs(r["speedup"] - speedup) < 1e-9 and abs(r["efficiency"] - speedup / r["ranks"]) < 1e-9, r
    assert r["wall_source"] == "slurm" and r["state"] == "COMPLETED", r
    assert abs(r["node_hours"] - r["wall_s"] / 3600 * r["nodes"]) < 1e-9 and r["gpu_hours"] is None, r
print("report matches the metrics files for", len(rows), "cells")
PY
# Wall times against sacct's Elapsed; one cell at a time: each starts after the one before ended.
ids=$(python3 -c "import json; print(','.join(r['job'] for r in json.load(open('report.json'))))")
on_login sacct -n -X -P -o JobID,ElapsedRaw,Start,End -j "$ids" >sacct.txt
python3 - "$T" <<'PY' || fail "wall times or overlap against sacct: $(cat sacct.txt)"
import json, sys
t = sys.argv[1]
rows = json.load(open(f"{t}/report.json"))
acct = {f[0]: f[1:] for f in (l.strip().split("|") for l in open(f"{t}/sacct.txt") if l.strip())}
for r in rows:
    assert abs(r["wall_s"] - int(acct[r["job"]][0])) <= 1, (r["wall_s"], acct[r["job"]])
times = [acct[r["job"]][1:] for r in rows]
for (s0, e0), (s1, e1) in zip(times, times[1:]):
    assert s1 >= e0, f"a cell started at {s1} before the one before it ended at {e0}"
PY

run report "$sweep"
expect_code 0
expect_out "SHAPE  RUN"
expect_out "memory: peak resident set size per rank (CPU), MiB"
expect_out "throughput: mean over epochs after the first; speedup and efficiency vs the fewest ranks"
run report "$sweep" --format markdown
expect_code 0
expect_out "| 1 node × 2 ranks | 2 | 0 |"
expect_out "| 2 nodes × 1 rank | 2 | 0 |"
run report "$sweep" --format csv
expect_code 0
[ "$(wc -l <"$T/out")" = 4 ] || fail "CSV is not a header and 3 rows: $(cat "$T/out")"
run report "$sweep" --best val_loss:min
expect_code 1
expect_err "varies the shape alone"
run report "$sweep" --plot "$T/scaling.svg"
expect_code 0
grep -q "<svg" scaling.svg || fail "scaling.svg is not SVG: $(head -c 300 scaling.svg)"
grep -q "Parallel efficiency per shape" scaling.svg || fail "the plot lacks the efficiency panel"

run plan grid.yaml --epochs 30
expect_code 0
expect_out "plan for grid.yaml (30 epochs), from 3 measured run(s); baseline shape 1x1"
grep -Eq '^  1x2 +2 +0 +[0-9]+% +measured' "$T/out" || fail "plan does not use 1x2's measured efficiency: $(cat "$T/out")"
expect_out "fastest: "
