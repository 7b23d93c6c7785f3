#!/usr/bin/env bash
# `ddpctl report` checks a multi-node run's communication against its floor
# (docs/report.md): two runs of a spec of the bundled trainer (resnet18, a
# 1-node and a 2-node shape, the fake queue), their metrics files as
# ddp-train writes them (step_time_s per rank, params, batch_size), the
# 2-node job's fabric check record (the busbw it was judged by): the 2-node
# step beyond the 1-node step, against 2(n-1)/n x 4 x params / busbw, is
# flagged in the table, in Markdown and in the JSON (validated).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
PY=/usr/bin/python3
cat >job.yaml <<YAML
name: comm
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 2
alternatives:
  - {nodes: 2}
trainer:
  model: resnet18
  data: synthetic
  epochs: 2
  batch_size: 16
YAML
mkdir -p logs
# metrics LABEL JOB WORLD STEP: two epochs' lines (the first is left out as warm-up).
metrics() {
  local e
  for e in 1 2; do
    printf '{"epoch": %d, "epochs": 2, "world_size": %d, "train_loss": 0.5, "img_per_s": 100, "epoch_s": 10, "steps": 50, "batch_size": 16, "model": "resnet18", "params": 11271432, "step_time_s": [%s, %s]}\n' \
      "$e" "$3" "$4" "$4"
  done >"logs/comm-$1_$2.metrics.jsonl"
}
run submit job.yaml --shape 1x2 --no-preflight
expect_code 0
one=$(sed -n 's/.*job \([0-9]*\).*/\1/p' "$T/out")
one=${one%%$'\n'*}
run submit job.yaml --shape 2x2 --no-preflight
expect_code 0
two=$(sed -n 's/.*job \([0-9]*\).*/\1/p' "$T/out")
two=${two%%$'\n'*}
{ [ -n "$one" ] && [ -n "$two" ]; } || fail "no job ids in submit's output: $(cat "$T/out")"
metrics 1x2 "$one" 2 0.10
metrics 2x2 "$two" 4 0.20
runs=("$DDPCTL_RUNS"/*/)
[ "${#runs[@]}" -eq 2 ] || fail "expected 2 runs, found ${#runs[@]}"
echo '{"nodes": ["g1", "g2"], "expected_gbs": 12.5, "level": "ok", "measures": [], "exclude": [], "text": "2 nodes"}' \
  >"logs/comm-2x2_$two.restart0.fabric.json"
run report "${runs[@]}"
expect_code 0
# resnet18, 200 classes: 11271432 parameters; 4 ranks at 12.5 GB/s: 2 x 3/4 x 4 x 11271432 / 12.5e9 = 0.00541 s.
expect_out "warning: 2x2 ("
expect_out "its step takes 0.2 s, 0.1 s more than 1x2's on one node: 18.5x its communication floor (0.00541 s: 11271432 parameters over 4 ranks at the 12.5 GB/s its fabric check judged by)"
run report "${runs[@]}" --format markdown
expect_code 0
expect_out "**Warning:** 2x2 ("
run report "${runs[@]}" --json
expect_code 0
cp "$T/out" report.json
"$PY" "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" report.json >valid.out 2>&1 ||
  fail "report's document is not valid: $(cat valid.out)"
"$PY" - report.json <<'PY' || fail "the rows do not carry the check: $(cat report.json)"
import json, sys
rows = {r["shape"]: r for r in json.load(open(sys.argv[1]))["rows"]}
one, two = rows["1x2"], rows["2x2"]
assert one["comm_s"] is None and one["comm_floor_s"] is None and abs(one["step_s"] - 0.10) < 1e-9, one
assert abs(two["comm_s"] - 0.10) < 1e-9 and abs(two["comm_floor_s"] - 2 * 3 / 4 * 4 * 11271432 / 12.5e9) < 1e-12, two
assert two["busbw_gbs"] == 12.5 and two["params"] == 11271432 and two["comm_note"].startswith("2x2 ("), two
PY
# Within twice the floor: no warning.
metrics 2x2 "$two" 4 0.105
run report "${runs[@]}"
expect_code 0
if grep -q "communication floor" "$T/out"; then fail "a step within twice its floor is flagged: $(cat "$T/out")"; fi
echo "ok"
