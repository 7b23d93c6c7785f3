#!/usr/bin/env bash
# `ddpctl plan`'s communication floor from what users write: a spec of the
# bundled trainer (resnet18, 2-node shapes among its alternatives), a run
# of it measured (the fake queue, a metrics file as ddp-train writes it),
# and a site profile with the partition's busbw_gbs: each multi-node
# shape's floor is 2(n-1)/n x 4 bytes x resnet18's parameters / busbw, in
# the table and the JSON (validated); a one-node shape has none; without
# the figure the note says so; a figure of 0 is refused at its line.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
PY=/usr/bin/python3
sed 's/^  cpu: *{nodes: 4, gpus_per_node: 0, cpus_per_node: 2,/  cpu: {nodes: 4, gpus_per_node: 0, busbw_gbs: 12.5, cpus_per_node: 2,/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >site.yaml
grep -q "busbw_gbs: 12.5" site.yaml || fail "the profile copy has no busbw_gbs: $(grep -n cpu: site.yaml)"
cat >job.yaml <<YAML
name: floor
cluster: ./site.yaml
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
run submit job.yaml --shape 1x2 --no-preflight
expect_code 0
mkdir -p logs
echo '{"epoch": 1, "epochs": 2, "world_size": 2, "train_loss": 0.5, "img_per_s": 100, "epoch_s": 10}' >logs/floor-1x2_101.metrics.jsonl
run plan job.yaml --json
expect_code 0
cp "$T/out" plan.json
"$PY" "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" plan.json >valid.out 2>&1 ||
  fail "plan's document is not valid: $(cat valid.out)"
"$PY" - plan.json <<'PY' || fail "the floors are not the formula's: $(cat plan.json)"
import json, sys
d = json.load(open(sys.argv[1]))
params = 11_168_832 + 513 * 200  # resnet18, 200 classes (ddp-train's count)
assert d["params"] == params, d["params"]
shapes = {s["shape"]: s for s in d["shapes"]}
assert shapes["1x2"]["comm_floor_s"] is None, shapes["1x2"]  # one node: not the fabric
two = shapes["2x2"]
want = 2 * 3 / 4 * 4 * params / 12.5e9
assert two["busbw_gbs"] == 12.5 and abs(two["comm_floor_s"] - want) < 1e-12, (two, want)
assert abs(two["step_s"] - 16 * 4 / two["img_per_s"]) < 1e-9, two
PY
grep -q "COMM FLOOR" plan.json || fail "the table has no COMM FLOOR column: $(cat plan.json)"
grep -q "45.1 MB of fp32 gradients (11271432 parameters, the bundled resnet18, 200 classes)" plan.json ||
  fail "the note does not say what the floor rests on: $(cat plan.json)"
# The bundled profile has no figure: the note says which shape lacks it.
sed -i "s|cluster: ./site.yaml|cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml|" job.yaml
run plan job.yaml
expect_code 0
expect_out "2x2: the profile has no busbw_gbs for its partition (ddpctl calibrate measures it)"
# A figure of 0: refused at its line, naming the field.
sed -i 's/busbw_gbs: 12.5/busbw_gbs: 0/' site.yaml
sed -i "s|cluster: .*|cluster: ./site.yaml|" job.yaml
run plan job.yaml
expect_code 1
expect_err "site.yaml:$(grep -n 'busbw_gbs: 0' site.yaml | cut -d: -f1):"
expect_err "partitions.cpu.busbw_gbs: '0' is out of range: above 0"
echo "ok"
