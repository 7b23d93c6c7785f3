#!/usr/bin/env bash
# `ddpctl report` gives a run's model FLOPs utilisation where its metrics
# give the FLOPs per sample and the site profile its devices' peak
# (docs/report.md "Model FLOPs utilisation"), "unknown" and why otherwise:
# three runs through the fake queue with configs/clusters/local.yaml as it
# ships (its a100 type's datasheet peaks; its cpu partition has none): a
# 2-node A100 run in bf16 whose metrics are ddp-train's, a CPU run of
# ddp-train, and a GPU run of a program whose metrics give no FLOPs. The
# table, Markdown, CSV and the JSON (validated) say each.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
PY=/usr/bin/python3
spec() {  # NAME PARTITION GPUS
  cat >"$1.yaml" <<YAML
name: $1
cluster: local
partition: $2
gpus_per_node: $3
nodes: 2
$([ "$3" -eq 0 ] && echo "procs_per_node: 1")
$([ "$3" -gt 0 ] && echo "gpu_type: a100")
trainer:
  model: resnet18
  data: synthetic
  epochs: 2
YAML
}
submit() {  # NAME: the job id
  run submit "$1.yaml" --no-preflight
  expect_code 0
  local id
  id=$(sed -n 's/.*job \([0-9]*\).*/\1/p' "$T/out")
  id=${id%%$'\n'*}
  [ -n "$id" ] || fail "no job id in submit's output: $(cat "$T/out")"
  echo "$id"
}
# metrics NAME JOB DEVICE AMP FLOPS: two epochs' lines as ddp-train writes them ("" FLOPS: none).
metrics() {
  local e flops=""
  [ -n "$5" ] && flops=", \"flops_per_sample\": $5"
  mkdir -p logs
  for e in 1 2; do
    printf '{"epoch": %d, "epochs": 2, "world_size": 2, "train_loss": 0.5, "img_per_s": %d, "epoch_s": 10, "device": "%s", "amp": "%s"%s}\n' \
      "$e" $((e * 1000)) "$3" "$4" "$flops"
  done >"logs/$1_$2.metrics.jsonl"
}
spec gpurun gpu 1
spec cpurun cpu 0
spec ownprog gpu 1
g=$(submit gpurun)
c=$(submit cpurun)
o=$(submit ownprog)
# resnet18 at 64x64, 200 classes: 3 x its forward, as ddp-train writes it.
F=6674669568
metrics gpurun "$g" cuda bf16 "$F"
metrics cpurun "$c" cpu off "$F"
metrics ownprog "$o" cuda bf16 ""
runs=("$DDPCTL_RUNS"/*/)
[ "${#runs[@]}" -eq 3 ] || fail "expected 3 runs, found ${#runs[@]}"
# The second epoch's 2000 img/s x F over 2 GPUs x 312 TFLOP/s (bf16): 2.14%.
run report "${runs[@]}"
expect_code 0
expect_out "MFU"
expect_out_re "^2x1 +gpurun-.* 2\.1%$"
expect_out "MFU 2.14% of 2 GPUs x 312 TFLOP/s bf16 (gpu_types.a100.peak_tflops in"
expect_out "unknown: the site profile gives no peak_tflops for partition cpu's CPU nodes (partitions.NAME.peak_tflops"
expect_out "unknown: its metrics give no flops_per_sample"
run report "${runs[@]}" --format markdown
expect_code 0
expect_out "| MFU |"
run report "${runs[@]}" --format csv
expect_code 0
expect_out ",flops_per_sample,mfu"
run report "${runs[@]}" --json
expect_code 0
cp "$T/out" report.json
"$PY" "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" report.json >valid.out 2>&1 ||
  fail "report's document is not valid: $(cat valid.out)"
F=$F "$PY" - report.json <<'PY' || fail "the rows' MFU is wrong: $(cat report.json)"
import json, os, sys
F = float(os.environ["F"])
rows = {r["run"].split("-")[0]: r for r in json.load(open(sys.argv[1]))["rows"]}
g, c, o = rows["gpurun"], rows["cpurun"], rows["ownprog"]
assert abs(g["mfu"] - F * 2000 / (2 * 312e12)) < 1e-12 and g["flops_per_sample"] == F, g
assert c["mfu"] is None and c["mfu_words"].startswith("unknown: the site profile gives no peak_tflops"), c
assert o["mfu"] is None and o["flops_per_sample"] is None and "flops_per_sample" in o["mfu_words"], o
PY
# The profile's figure for fp32 where the run did not use AMP: 19.5 TFLOP/s.
metrics gpurun "$g" cuda off "$F"
run report "${runs[0]}" "${runs[1]}" "${runs[2]}"
expect_code 0
expect_out "of 2 GPUs x 19.5 TFLOP/s fp32"
echo "ok"
