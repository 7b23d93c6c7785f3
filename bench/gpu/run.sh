#!/usr/bin/env bash
# Issue 15, part 2, on a GPU machine (one NVIDIA H100/H200; python3 with a
# CUDA torch 2.x; nothing installed there): build, correctness, throughput
# against Python DDP on the same GPU and torch, and the JPEG loader. Each
# stage fits one device call (10 minutes); logs and a summary go to $OUT (the
# device tool's folder) or /tmp/ddpctl-gpu.
#   here, once:   bench/gpu/fetch-deps.sh
#   device call:  bench/gpu/run.sh check        (carry: [".gpu-deps"])
#                 bench/gpu/run.sh throughput
#                 bench/gpu/run.sh loader
# Every stage builds first (build-gpu/, seconds when it is already there).
# Stages print "gpu: <what>: ..." lines; bench/RESULTS.md takes them as they are.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/ddpctl-gpu}
mkdir -p "$out"
stage=${1:-check}
exec > >(tee -a "$out/$stage.log") 2>&1
"$root/bench/gpu/build.sh" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo "gpu: build failed"; exit 1; }
t=$root/build-gpu/trainer/ddp-train
make_tin=$root/build-gpu/make_tiny_imagenet
work=$(mktemp -d)
echo "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader), $(nproc) cores," \
  "torch $(python3 -c 'import torch; print(torch.__version__)')"
port=29500
next_port() { port=$((port + 1)); echo "$port"; }
last_json() { python3 -c "import json,sys; print(json.dumps([json.loads(x) for x in open('$1')][-1]))"; }
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])$2)" "$1"; }

# trainer NAME ARGS...: one ddp-train run, its log under $out, its last metrics line on stdout
trainer() {
  local name=$1
  shift
  rm -f "$work/$name.jsonl"
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$(next_port) "$t" --device cuda --metrics "$work/$name.jsonl" --no-val "$@" \
    >"$out/$name.log" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then echo "gpu: $name: exit $rc: $(tail -2 "$out/$name.log" | tr '\n' ' ')" >&2; return "$rc"; fi
  last_json "$work/$name.jsonl"
}
# python_ddp NAME ARGS...: bench/python_ddp.py on 1 GPU; its JSON line on stdout
python_ddp() {
  local name=$1
  shift
  PYTHONUNBUFFERED=1 python3 -m torch.distributed.run --nproc-per-node 1 --master-port "$(next_port)" \
    "$root/bench/python_ddp.py" --device cuda --channels-last "$@" >"$out/$name.log" 2>&1 ||
    { echo "gpu: $name: failed: $(tail -2 "$out/$name.log" | tr '\n' ' ')" >&2; return 1; }
  grep -o '{"img_per_s.*}' "$out/$name.log" | tail -1
}

check() {
  local m
  echo "== correctness on one GPU"
  m=$(trainer nccl1 --nproc-per-node 1 --model resnet18 --image-size 64 --epochs 2 --max-steps 40 --synthetic-size 20000) &&
    echo "gpu: NCCL world 1: ok, loss $(field "$m" "['train_loss']"), sync $(field "$m" "['sync']")"
  if m=$(trainer nccl2 --nproc-per-node 2 --model resnet18 --image-size 64 --epochs 1 --max-steps 20 --synthetic-size 20000); then
    echo "gpu: NCCL 2 ranks on one GPU: ok ($(grep -o 'parameters identical.*' "$out/nccl2.log"))"
  else
    echo "gpu: NCCL 2 ranks on one GPU: refused: $(grep -m1 -i 'nccl\|duplicate\|error' "$out/nccl2.log")"
  fi
  for amp in fp16 bf16; do
    m=$(trainer "amp-$amp" --nproc-per-node 1 --model resnet50 --image-size 64 --amp "$amp" --epochs 3 --max-steps 60 \
      --synthetic-size 20000) &&
      echo "gpu: AMP $amp: loss $(field "$m" "['train_loss']") after 3 epochs (nan or inf: scaler stuck)," \
        "memory MiB peak/avg/mode $(field "$m" "['rank0_mem_mib']")"
  done
  for c in fp16 bf16; do
    m=$(trainer "compress-$c" --nproc-per-node 1 --model resnet18 --image-size 64 --sync flat --compress "$c" --epochs 2 \
      --max-steps 30 --synthetic-size 20000) && echo "gpu: --compress $c: ok, loss $(field "$m" "['train_loss']")"
  done
  # Checkpoint -> SIGUSR1 (what Slurm sends before the time limit) -> resume.
  local ck=$work/ck pid rc
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$(next_port) "$t" --device cuda --nproc-per-node 1 --model resnet18 --image-size 64 \
    --epochs 4 --max-steps 200 --synthetic-size 100000 --no-val --checkpoint-dir "$ck" --progress "$work/p.json" \
    >"$out/requeue1.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q '"epoch": *2' "$work/p.json" 2>/dev/null && break; sleep 0.1; done
  kill -USR1 "$pid"
  wait "$pid"
  rc=$?
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$(next_port) "$t" --device cuda --nproc-per-node 1 --model resnet18 --image-size 64 \
    --epochs 4 --max-steps 200 --synthetic-size 100000 --no-val --checkpoint-dir "$ck" --resume >"$out/requeue2.log" 2>&1
  echo "gpu: SIGUSR1 in epoch 2: exit $rc (75 = stopped for requeue); resume: exit $? ($(grep -m1 -i 'resum' "$out/requeue2.log"))"
}

# The GPU's dense BF16/FP16 peak, TFLOP/s (the datasheets' figures without
# sparsity), for ddp-train's MFU; $GPU_PEAK_TFLOPS wins; "" when not known.
gpu_peak_tflops() {
  if [ -n "${GPU_PEAK_TFLOPS:-}" ]; then echo "$GPU_PEAK_TFLOPS"; return; fi
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null) || name=""
  name=${name%%$'\n'*}
  case "$name" in
    *H100*PCIe*) echo 756.5 ;;
    *H100*NVL* | *H200*NVL*) echo 835.5 ;;
    *H100* | *H200*) echo 989.4 ;;  # the SXM forms
    *A100*) echo 312 ;;
    *) echo "" ;;
  esac
}

throughput() {
  local peak
  peak=$(gpu_peak_tflops)
  echo "== throughput, 1 GPU, img/s (ddp-train: 2nd epoch of --max-steps 60; Python: 60 steps after 20 warm-up)"
  echo "   MFU: ddp-train's flops_per_sample x img/s over ${peak:-an unknown} TFLOP/s (set GPU_PEAK_TFLOPS)"
  printf '%-34s %6s %12s %12s %8s %6s\n' "model, input, amp" batch ddp-train python ratio MFU
  local model size amp bs m p mfu
  for cfg in "resnet50 64" "resnet50 224" "resnet18 64"; do
    read -r model size <<<"$cfg"
    for amp in fp16 bf16; do
      for bs in 16 32 128; do
        [ "$size" = 224 ] && [ "$bs" = 16 ] && continue
        m=$(trainer "tp-$model-$size-$amp-$bs" --nproc-per-node 1 --model "$model" --image-size "$size" --amp "$amp" \
          --batch-size "$bs" --epochs 2 --max-steps 60 --synthetic-size 1000000 --workers 4) || continue
        p=$(python_ddp "py-$model-$size-$amp-$bs" --model "$model" --image-size "$size" --amp "$amp" --batch-size "$bs" \
          --warmup 20 --steps 60) || continue
        mfu=-
        [ -z "$peak" ] || mfu=$(python3 -c "print(f'{100 * $(field "$m" "['flops_per_sample']") * $(field "$m" "['img_per_s']") / ($peak * 1e12):.1f}%')")
        printf '%-34s %6s %12.0f %12.0f %7.2fx %6s\n' "$model ${size}px $amp" "$bs" "$(field "$m" "['img_per_s']")" \
          "$(field "$p" "['img_per_s']")" "$(python3 -c "print($(field "$m" "['img_per_s']") / $(field "$p" "['img_per_s']"))")" \
          "$mfu"
      done
    done
  done
}

loader() {
  echo "== JPEGs through the loaders, ResNet-50, bf16, batch 128, 1 GPU, img/s"
  "$make_tin" "$work/tin64" 200 100 1 64 >/dev/null
  "$make_tin" "$work/tin224" 100 60 1 224 >/dev/null
  local size w m p s
  for size in 64 224; do
    s=$(trainer "syn-$size" --nproc-per-node 1 --model resnet50 --image-size "$size" --amp bf16 --batch-size 128 \
      --epochs 2 --max-steps 30 --synthetic-size 1000000 --workers 4) || continue
    echo "gpu: ${size}px synthetic (the bound): $(field "$s" "['img_per_s']")"
    for w in 2 4 8 12; do
      m=$(trainer "jpeg-$size-$w" --nproc-per-node 1 --model resnet50 --data "$work/tin$size" --image-size "$size" \
        --amp bf16 --batch-size 128 --epochs 2 --max-steps 30 --workers "$w") || continue
      p=$(python_ddp "pyjpeg-$size-$w" --model resnet50 --image-size "$size" --amp bf16 --batch-size 128 \
        --data "$work/tin$size" --workers "$w" --warmup 10 --steps 30) || p='{"img_per_s": 0}'
      echo "gpu: ${size}px JPEG, $w loader threads/workers: ddp-train $(field "$m" "['img_per_s']"), Python +" \
        "torchvision $(field "$p" "['img_per_s']")"
    done
  done
}

case $stage in
  check) check ;;
  throughput) throughput ;;
  loader) loader ;;
  *) echo "usage: $0 check|throughput|loader" >&2; exit 2 ;;
esac
rm -rf "$work"
