#!/usr/bin/env bash
# Preemption on the real local Slurm cluster (scripts/local-slurm up):
# TRIALS (default 5) times per configuration, a 2-node job on `scavenger`
# (PreemptMode=REQUEUE, 30 s grace) trains, then a job of `urgent` takes
# its nodes. Per preemption: the steps lost (trained before the job ended,
# less those in the checkpoint a restart resumes from) and the seconds from
# the preemption's SIGTERM to the checkpoint on disk.
#   ddp-train  the bundled trainer under ddpctl (requeue:): SIGTERM stops it
#              at the next step; rank 0 checkpoints; the job requeues itself.
#              SIGTERM's time: when the urgent job was submitted (an upper
#              bound: Slurm's scheduler pass comes first).
#   recipe     the docs' Python recipe under ddpctl (docs/running.md): the
#              handler notes SIGTERM's time, checkpoints at the next step.
#   plain      the baseline: the same program without a handler, submitted
#              with plain `sbatch --requeue` (Slurm's requeue, no ddpctl),
#              checkpointing every 50 steps, a common periodic policy.
# A step is 0.05 s of sleep in the Python program, a smallcnn step in
# ddp-train. Prints one line per trial and the medians.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
DDP_TRAIN=${DDP_TRAIN:-$root/build/trainer/ddp-train}
[ -x "$DDP_TRAIN" ] || { echo "bench: $DDP_TRAIN not built (scripts/build)" >&2; exit 1; }
trials=${TRIALS:-5}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
JOB_NAME=bench-preempt
cat >prog.py <<'PY'
import os, signal, time
d = os.environ["BENCH_DIR"]
stop, t_sig = False, None
def on_stop(signum, frame):
    global stop, t_sig
    stop = True
    t_sig = t_sig or time.time()
if os.environ.get("HANDLER") == "1":
    signal.signal(signal.SIGTERM, on_stop)
rank = int(os.environ.get("SLURM_PROCID", "0"))
ckpt = os.path.join(d, "ckpt")
every = int(os.environ.get("CKPT_EVERY", "0"))
def save(step):
    with open(ckpt + ".tmp", "w") as f:
        f.write(str(step))
    os.replace(ckpt + ".tmp", ckpt)
step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
while True:
    time.sleep(0.05)  # one training step
    step += 1
    if rank == 0:
        with open(os.path.join(d, "last"), "w") as f:
            f.write(str(step))
        if every and step % every == 0:
            save(step)
    if stop:
        if rank == 0:
            save(step)
            with open(os.path.join(d, "sig"), "w") as f:
                f.write(f"{t_sig} {time.time()}\n")
        os._exit(75)
PY
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# wait_file FILE [TEXT]: until FILE exists (and holds TEXT), at most 2 minutes.
wait_file() {
  local deadline=$((SECONDS + 120))
  until [ -s "$1" ] && { [ -z "${2:-}" ] || grep -q -- "$2" "$1"; }; do
    [ "$SECONDS" -lt "$deadline" ] || fail "bench: no ${2:-file} in $1"
    sleep 0.1
  done
}
# preempt: an urgent job takes the scavenger nodes; prints when it was submitted.
preempt() {
  local t
  t=$(date +%s.%N)
  on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 2' >/dev/null
  echo "$t"
}
# settle JOB: the preempted job cancelled (no second attempt) and the urgent job gone.
settle() {
  on_login scancel "$1" 2>/dev/null || true
  local deadline=$((SECONDS + 120))
  while [ -n "$(on_login squeue -h -p scavenger,urgent -o %i)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "bench: the cluster did not settle: $(on_login squeue -h -o '%i %P %T')"
    sleep 0.2
  done
}
results=()
for i in $(seq "$trials"); do
  # ddp-train under ddpctl.
  dir=$T/dt$i && mkdir -p "$dir/trace"
  write_spec dt"$i".yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 1}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 100
  batch_size: 8
  workers: 0
  checkpoint_dir: $dir/ck
  extra_args: [--synthetic-size, "2048", --image-size, "32", --no-val, --trace-samples, $dir/trace/s]
YAML
  run submit dt"$i".yaml --no-preflight
  expect_code 0
  id=$(submitted_job_id)
  out=logs/${JOB_NAME}_$id.restart0.0.out
  deadline=$((SECONDS + 120))
  until [ "$(cat "$dir"/trace/s.rank0.* 2>/dev/null | wc -l)" -ge 10 ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "bench: ddp-train did not train 10 steps: $(cat "$out" 2>&1)"
    sleep 0.1
  done
  t0=$(preempt)
  wait_file "$out" "stopped at global step"
  stopped=$(sed -n 's/^ddp-train: stopped at global step \([0-9]*\)$/\1/p' "$out")
  trained=$(cat "$dir"/trace/s.rank0.* | wc -l)
  t1=$(stat -c %.Y "$dir/ck/checkpoint.pt")
  results+=("ddp-train $((trained - stopped)) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')")
  settle "$id"
  # The recipe under ddpctl.
  dir=$T/rc$i && mkdir -p "$dir"
  write_spec rc"$i".yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 1}
env: {BENCH_DIR: $dir, HANDLER: "1"}
command: [python3, $T/prog.py]
YAML
  run submit rc"$i".yaml --no-preflight
  expect_code 0
  id=$(submitted_job_id)
  wait_file "$dir/last"
  until s=$(cat "$dir/last" 2>/dev/null); [ "${s:-0}" -ge 20 ]; do sleep 0.1; done
  preempt >/dev/null
  wait_file "$dir/sig"
  read -r ts tc <"$dir/sig"
  results+=("recipe $(( $(cat "$dir/last") - $(cat "$dir/ckpt") )) $(awk -v a="$ts" -v b="$tc" 'BEGIN { printf "%.2f", b - a }')")
  settle "$id"
  # The baseline: Slurm's plain requeue, no handler, a checkpoint every 50 steps.
  dir=$T/pl$i && mkdir -p "$dir"
  id=$(on_login sbatch --parsable --requeue -p scavenger -N 2 --ntasks-per-node=1 --chdir="$T" -o "$dir/out" \
    -J "$JOB_NAME-plain" --export=ALL,BENCH_DIR="$dir",CKPT_EVERY=50 --wrap "srun python3 $T/prog.py")
  wait_file "$dir/last"
  # Preempted at a step that is not a multiple of 50, as a preemption comes any time.
  until s=$(cat "$dir/last" 2>/dev/null); [ "${s:-0}" -ge 60 ] && [ $((s % 50)) -ne 0 ]; do sleep 0.05; done
  preempt >/dev/null
  deadline=$((SECONDS + 120))
  until [ "$(on_login squeue -h -j "$id" -o %T)" != RUNNING ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "bench: the plain job $id was not preempted"
    sleep 0.1
  done
  results+=("plain $(( $(cat "$dir/last") - $(cat "$dir/ckpt" 2>/dev/null || echo 0) )) -")
  settle "$id"
done
printf '%s\n' "${results[@]}"
base=$(printf '%s\n' "${results[@]}" | awk '$1 == "plain" { print $2 }' | median)
for c in ddp-train recipe plain; do
  lost=$(printf '%s\n' "${results[@]}" | awk -v c="$c" '$1 == c { print $2 }' | median)
  most=$(printf '%s\n' "${results[@]}" | awk -v c="$c" '$1 == c { print $2 }' | sort -n | tail -n 1)
  secs=$(printf '%s\n' "${results[@]}" | awk -v c="$c" '$1 == c && $3 != "-" { print $3 }' | median)
  ratio=$(awk -v a="$lost" -v b="$base" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
  echo "$c: steps lost per preemption median $lost, max $most ($ratio the plain requeue's); SIGTERM to checkpoint on disk median ${secs} s"
done
