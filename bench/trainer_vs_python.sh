#!/usr/bin/env bash
# ddp-train against PyTorch DDP in Python on the same torch build (Debian's
# 1.13; `scripts/setup --bench` installs python3-torch), same model (ResNet-18
# for 64x64, 200 classes), batch 32 per rank, synthetic data, 1 thread per
# rank, 1 and 2 ranks, each in this run:
#   - Python as users run it (glibc malloc defaults), and Python with the
#     trainer's malloc settings (MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1G,
#     what ddp-train sets with mallopt) — the ratios are against both;
#   - the no-communication bound for 2 ranks: two 1-rank trainers at once;
#   - time from process start to the first optimizer step, 2 ranks, ddp-train
#     vs torch.distributed.run, both measured from the same shell timestamp.
# Throughput: ddp-train's second epoch (--max-steps N each); Python: N steps
# after N warm-up steps; global img/s (slowest rank). Best of --repeat runs.
# Start-up is also split: launch -> rendezvous done (process start, library
# load, store and process group) and launch -> first step (adds building the
# model, the parameter broadcast and one ResNet-18 step, itself seconds on
# one CPU thread). --startup-only measures just that, with 1-step epochs.
# Usage: bench/trainer_vs_python.sh [--steps N] [--repeat R] [--startup-only]
# (measure() sets its results with printf -v, which shellcheck cannot follow.)
# shellcheck disable=SC2154
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddp_train=${DDP_TRAIN:-$root/build/trainer/ddp-train}
steps=8 repeat=1 startup_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --startup-only) startup_only=1; shift ;;
    *) echo "usage: $0 [--steps N] [--repeat R] [--startup-only]" >&2; exit 2 ;;
  esac
done
[ -x "$ddp_train" ] || { echo "bench: $ddp_train not built (scripts/build)" >&2; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null ||
  { echo "bench: Python torch is missing: run scripts/setup --bench (Debian python3-torch)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each launch gets its own port (calls run in subshells: no shared counter).
next_port() { echo $((20000 + RANDOM % 9000)); }
tuned=(MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1073741824)
py() { /usr/bin/python3 -c "$1"; }
best() { py "print(max($1, $2))"; }

# trainer RANKS [PORT]: "img/s first_step_s_from_launch"
trainer() {
  local ranks=$1 port=${2:-$(next_port)} t0
  rm -f "$work/m$port.jsonl"
  t0=$(date +%s.%N)
  MASTER_PORT=$port "$ddp_train" --nproc-per-node "$ranks" --model resnet18 --data synthetic --image-size 64 \
    --classes 200 --batch-size 32 --threads 1 --workers 1 --epochs 2 --max-steps "$steps" --no-val \
    --synthetic-size 1000000 --metrics "$work/m$port.jsonl" >"$work/out$port" 2>&1 || { cat "$work/out$port" >&2; exit 1; }
  py "import json; l=[json.loads(x) for x in open('$work/m$port.jsonl')]; f=l[0]['first_step_unix']; print(l[-1]['img_per_s'], f - $t0, f - l[0]['first_step_s'] + l[0]['rendezvous_s'] - $t0)"
}
# python RANKS [ENV...]: "img/s first_step_s_from_launch"
python_ddp() {
  local ranks=$1 port t0
  shift
  port=$(next_port)
  t0=$(date +%s.%N)
  env "$@" /usr/bin/python3 -m torch.distributed.run --nproc_per_node "$ranks" --master_port "$port" \
    --redirects 1 --tee 1 "$root/bench/python_ddp.py" --model resnet18 --batch-size 32 --image-size 64 \
    --classes 200 --warmup "$steps" --steps "$steps" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  py "import json,re; l=[json.loads(m.group(0)) for m in (re.search(r'\{\"img_per_s.*\}', x) for x in open('$work/out')) if m][0]; print(l['img_per_s'], l['first_step_unix'] - $t0, l['rendezvous_unix'] - $t0)"
}
# measure NAME CMD...: best img/s over $repeat runs into $NAME; that run's
# launch -> first step and launch -> rendezvous into ${NAME}_first, ${NAME}_rdzv
measure() {
  local name=$1 ips=0 first=0 rdzv=0 r a b c
  shift
  for r in $(seq "$repeat"); do
    read -r a b c <<<"$("$@")"
    if py "import sys; sys.exit(0 if $a > $ips else 1)"; then ips=$a first=$b rdzv=$c; fi
    : "$r"
  done
  printf -v "$name" '%s' "$ips"
  printf -v "${name}_first" '%s' "$first"
  printf -v "${name}_rdzv" '%s' "$rdzv"
}
startup() {
  echo "start-up, 2 ranks, measured from the same shell timestamp before each launch:"
  echo "  launch -> rendezvous done: ddp-train $(py "print(f'{$1:.2f}')") s, torch.distributed.run $(py "print(f'{$3:.2f}')") s" \
    "(ratio $(py "print(f'{$3 / $1:.1f}x')"); target for ddp-train: < 1 s)"
  echo "  launch -> first optimizer step: ddp-train $(py "print(f'{$2:.2f}')") s, torch.distributed.run $(py "print(f'{$4:.2f}')") s" \
    "(ratio $(py "print(f'{$4 / $2:.1f}x')"))"
}
if [ "$startup_only" = 1 ]; then
  steps=1
  measure t trainer 2
  measure p python_ddp 2 "${tuned[@]}"
  startup "$t_rdzv" "$t_first" "$p_rdzv" "$p_first"
  exit 0
fi

echo "ddp-train vs Python DDP (torch $(py 'import torch; print(torch.__version__)')), ResNet-18 64x64, 200 classes,"
echo "batch 32/rank, synthetic data, 1 thread/rank, $steps timed steps, best of $repeat"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p;T;q' /proc/cpuinfo)"
printf '%-52s %10s\n' "configuration" "img/s"
for ranks in 1 2; do
  measure t trainer "$ranks"
  measure pd python_ddp "$ranks"
  measure pt python_ddp "$ranks" "${tuned[@]}"
  printf '%-52s %10.1f\n' "$ranks rank(s), ddp-train" "$t" "$ranks rank(s), Python DDP, default malloc" "$pd" \
    "$ranks rank(s), Python DDP, the trainer's malloc settings" "$pt"
  echo "  ddp-train vs Python default at $ranks rank(s): $(py "print(f'{$t / $pd:.2f}x')")" \
    "(target at 2 ranks: >= 1.50x)"
  echo "  ddp-train vs Python tuned at $ranks rank(s):   $(py "print(f'{$t / $pt:.2f}x')")" \
    "(target at 2 ranks: >= 1.10x)"
  if [ "$ranks" = 1 ]; then t1=$t; else t2=$t; t2_first=$t_first t2_rdzv=$t_rdzv p2_first=$pt_first p2_rdzv=$pt_rdzv; fi
done
# The no-communication bound: two independent 1-rank trainers on the 2 cores.
bound=0
for r in $(seq "$repeat"); do
  trainer 1 29001 >"$work/a" &
  trainer 1 29002 >"$work/b" &
  wait
  bound=$(best "$bound" "$(py "print($(cut -d' ' -f1 "$work/a") + $(cut -d' ' -f1 "$work/b"))")")
  : "$r"
done
printf '%-52s %10.1f\n' "2 x 1 rank at once, no communication (bound)" "$bound"
echo "  2-rank efficiency vs 1 rank: $(py "print(f'{$t2 / (2 * $t1) * 100:.0f}%')");" \
  "vs the no-communication bound: $(py "print(f'{$t2 / $bound * 100:.0f}%')")"
startup "$t2_rdzv" "$t2_first" "$p2_rdzv" "$p2_first"
