#!/usr/bin/env bash
# The real-data pipeline against torchvision, everything in this run, on a
# TinyImageNet-shaped JPEG set made by make_tiny_imagenet (200 classes x
# --per-class 64x64 training images):
#   1. The loader alone: `ddp-train --loader-only` (libturbojpeg decode,
#      random crop from the image padded by 4, flip, normalise, batch) against
#      torchvision's ImageFolder + DataLoader (PIL decode, the same transforms:
#      bench/torchvision_loader.py), with 1 and 2 loader threads / worker
#      processes; img/s and img/s per worker (a worker is a core's worth).
#   2. End to end: 2-rank training on those JPEGs, ResNet-18 64x64, batch 32
#      per rank, 1 intra-op thread and 1 loader worker per rank: ddp-train
#      against Python DDP with torchvision's loader (bench/python_ddp.py
#      --data), both as users run them (glibc malloc defaults: ddp-train
#      --no-keep-memory) and with the trainer's malloc settings (ddp-train's
#      default; MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1G for Python).
# Throughput: ddp-train's second epoch (--max-steps N each); Python: N steps
# after N warm-up steps; global img/s. Best of --repeat runs.
# Usage: bench/loader_vs_torchvision.sh [--per-class N] [--batches N] [--steps N] [--repeat R]
# (measure sets its results with printf -v, which shellcheck cannot follow.)
# shellcheck disable=SC2154
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
ddp_train=${DDP_TRAIN:-$build/trainer/ddp-train}
make_tin=${MAKE_TINY_IMAGENET:-$build/tests/trainer/make_tiny_imagenet}
per_class=50 batches=150 steps=8 repeat=1
while [ $# -gt 0 ]; do
  case $1 in
    --per-class) per_class=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "usage: $0 [--per-class N] [--batches N] [--steps N] [--repeat R]" >&2; exit 2 ;;
  esac
done
for f in "$ddp_train" "$make_tin"; do
  [ -x "$f" ] || { echo "bench: $f not built (scripts/build)" >&2; exit 1; }
done
/usr/bin/python3 -c "import torch, torchvision" 2>/dev/null ||
  { echo "bench: Python torch or torchvision is missing: run scripts/setup --bench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py() { /usr/bin/python3 -c "$1"; }
next_port() { echo $((20000 + RANDOM % 9000)); }
tuned=(MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1073741824)
data=$work/tiny-imagenet
"$make_tin" "$data" 200 "$per_class" 1 64 >/dev/null
images=$((200 * per_class))

# json_field FILE FIELD: FIELD of the first JSON line in FILE that has it.
json_field() {
  py "import json,re,sys
for x in open('$1'):
    m = re.search(r'\{.*\"$2\".*\}', x)
    if m: print(json.loads(m.group(0))['$2']); sys.exit(0)
sys.exit('bench: no $2 in $1')"
}
trainer_loader() {
  "$ddp_train" --loader-only --data "$data" --image-size 64 --batch-size 32 --workers "$1" --max-steps "$batches" \
    >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  json_field "$work/out" loader_img_per_s
}
torchvision_loader() {
  /usr/bin/python3 "$root/bench/torchvision_loader.py" --data "$data" --image-size 64 --batch-size 32 \
    --workers "$1" --batches "$batches" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  json_field "$work/out" loader_img_per_s
}
# trainer_e2e [--no-keep-memory]: global img/s of the second epoch, 2 ranks
trainer_e2e() {
  local port
  port=$(next_port)
  rm -f "$work/m.jsonl"
  MASTER_PORT=$port "$ddp_train" --nproc-per-node 2 --model resnet18 --data "$data" --image-size 64 \
    --batch-size 32 --threads 1 --workers 1 --epochs 2 --max-steps "$steps" --no-val --metrics "$work/m.jsonl" \
    "$@" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  py "import json; print([json.loads(x) for x in open('$work/m.jsonl')][-1]['img_per_s'])"
}
# python_e2e [ENV...]: global img/s over the timed steps, 2 ranks
python_e2e() {
  env "$@" /usr/bin/python3 -m torch.distributed.run --nproc_per_node 2 --master_port "$(next_port)" \
    --redirects 1 --tee 1 "$root/bench/python_ddp.py" --model resnet18 --batch-size 32 --image-size 64 \
    --data "$data" --workers 1 --warmup "$steps" --steps "$steps" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  json_field "$work/out" img_per_s
}
# measure NAME CMD...: the best of $repeat runs of CMD into $NAME
measure() {
  local name=$1 best=0 v r
  shift
  for r in $(seq "$repeat"); do
    v=$("$@")
    best=$(py "print(max($best, $v))")
    : "$r"
  done
  printf -v "$name" '%s' "$best"
}
ratio() { py "print(f'{$1 / $2:.2f}x')"; }

echo "the real-data pipeline: ddp-train vs torchvision (torch $(py 'import torch; print(torch.__version__)')," \
  "torchvision $(py 'import torchvision; print(torchvision.__version__)'))"
echo "data: $images JPEGs 64x64, 200 classes (make_tiny_imagenet); batch 32; best of $repeat"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p;T;q' /proc/cpuinfo)"
echo
echo "1. the loader alone (decode + augment + batch), $batches batches, the first one not timed"
printf '%-58s %10s %12s\n' "configuration" "img/s" "img/s/worker"
for w in 1 2; do
  measure t trainer_loader "$w"
  measure p torchvision_loader "$w"
  printf '%-58s %10.0f %12.0f\n' "ddp-train --loader-only, $w thread(s)" "$t" "$(py "print($t / $w)")" \
    "torchvision ImageFolder + DataLoader, $w worker process(es)" "$p" "$(py "print($p / $w)")"
  echo "  ddp-train vs torchvision at $w worker(s): $(ratio "$t" "$p") (target per core: >= 3.00x)"
done
echo
echo "2. end to end: 2 ranks, ResNet-18 64x64, batch 32/rank, 1 thread + 1 loader worker per rank, $steps timed steps"
printf '%-58s %10s\n' "configuration" "img/s"
measure td trainer_e2e --no-keep-memory
measure tt trainer_e2e
measure pd python_e2e
measure pt python_e2e "${tuned[@]}"
printf '%-58s %10.1f\n' "ddp-train, glibc malloc defaults (--no-keep-memory)" "$td" \
  "ddp-train, its malloc settings (default)" "$tt" \
  "Python DDP + torchvision loader, glibc malloc defaults" "$pd" \
  "Python DDP + torchvision loader, the trainer's malloc settings" "$pt"
echo "  as users run them (defaults: ddp-train's vs Python's): $(ratio "$tt" "$pd") (target: >= 1.50x)"
echo "  both with glibc defaults: $(ratio "$td" "$pd");  both with the trainer's malloc settings: $(ratio "$tt" "$pt")"
