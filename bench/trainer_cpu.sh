#!/usr/bin/env bash
# CPU benchmarks of ddp-train, each against its named baseline in the same run:
#   1. malloc: workers that keep freed memory mapped (the default) vs
#      --no-keep-memory (glibc's defaults: large tensors go back to the OS
#      every step and page-fault back in);
#   2. sync: c10d::Reducer overlapping allreduce with backward (the default)
#      vs flat buckets allreduced after backward.
# ResNet-18 for 64x64 inputs, 200 classes, batch 32 per rank, synthetic data,
# one intra-op thread per rank. Throughput is the second epoch's global img/s
# (the first warms up the allocator), each epoch --steps optimizer steps.
# Usage: bench/trainer_cpu.sh [--steps N] [--model M] [--repeat R]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddp_train=${DDP_TRAIN:-$root/build/trainer/ddp-train}
steps=8 model=resnet18 repeat=1
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "usage: $0 [--steps N] [--model M] [--repeat R]" >&2; exit 2 ;;
  esac
done
[ -x "$ddp_train" ] || { echo "bench: $ddp_train not built (scripts/build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$((29700 + RANDOM % 200))

# measure RANKS ARGS...: prints the best second-epoch img/s over $repeat runs.
measure() {
  local ranks=$1 best=0 r ips
  shift
  for r in $(seq "$repeat"); do
    port=$((port + 1))
    rm -f "$work/m.jsonl"
    MASTER_PORT=$port "$ddp_train" --nproc-per-node "$ranks" --model "$model" --data synthetic --image-size 64 \
      --classes 200 --batch-size 32 --threads 1 --workers 1 --epochs 2 --max-steps "$steps" --no-val \
      --synthetic-size 1000000 --metrics "$work/m.jsonl" "$@" >"$work/out" 2>&1 ||
      { cat "$work/out" >&2; exit 1; }
    ips=$(sed -n '2s/.*"img_per_s":\([0-9.]*\).*/\1/p' "$work/m.jsonl")
    best=$(python3 -c "print(max($best, $ips))")
    : "$r"
  done
  echo "$best"
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}x')"; }

echo "ddp-train CPU benchmarks: $model 64x64, batch 32/rank, 1 thread/rank, $steps steps/epoch, best of $repeat"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p;T;q' /proc/cpuinfo)"
printf '%-42s %10s\n' "configuration" "img/s"
for ranks in 1 2; do
  keep=$(measure "$ranks")
  nokeep=$(measure "$ranks" --no-keep-memory)
  printf '%-42s %10.1f\n' "$ranks rank(s), keep memory (default)" "$keep"
  printf '%-42s %10.1f\n' "$ranks rank(s), --no-keep-memory (baseline)" "$nokeep"
  echo "  malloc keep-memory speedup at $ranks rank(s): $(ratio "$keep" "$nokeep")"
done
reducer=$(measure 2 --sync reducer)
flat=$(measure 2 --sync flat)
printf '%-42s %10.1f\n' "2 ranks, --sync reducer (default)" "$reducer"
printf '%-42s %10.1f\n' "2 ranks, --sync flat (baseline)" "$flat"
echo "  reducer vs flat on CPU: $(ratio "$reducer" "$flat")"
