#!/usr/bin/env bash
# On a GPU machine (python3 with a CUDA torch 2.x; nothing else needed): a
# real NCCL Flight Recorder dump, asked for as ddpctl's agent asks
# (docs/running.md "Flight Recorder"): one rank (NCCL refuses two ranks on one
# GPU) with the variables the job script sets, a few all_reduces, then a byte
# written to its pipe. The dump and a summary go to $OUT (the device tool's
# folder) or /tmp/ddpctl-gpu-fr; tests/unit/data/flight_recorder/README.md
# says what the hand-written NCCL fixtures stand in for, and this one checks
# them: copy the dump there as nccl-1rank-real/rank_0 and read it with
# read_fr_dump. One device call: bench/gpu/flight_recorder.sh
set -uo pipefail
out=${OUT:-/tmp/ddpctl-gpu-fr}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29671 WORLD_SIZE=1 RANK=0 TORCH_FR_BUFFER_SIZE=2000 \
  TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE="$work/rank_" \
  TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$work/rank_" TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$work/pipe_"
cat >"$work/one.py" <<'EOF'
import os, sys, time
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
x = torch.ones(1 << 20, device="cuda")
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
dist.all_reduce(x)  # the last, maybe not completed when the dump is taken
open(sys.argv[1], "w").close()
time.sleep(120)
EOF
python3 "$work/one.py" "$work/ready" >"$out/rank0.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e "$work/ready" ] && [ -p "$work/pipe_0.pipe" ] && break; sleep 0.1; done
if [ ! -p "$work/pipe_0.pipe" ]; then
  echo "gpu: flight recorder: torch made no pipe: $(python3 -c 'import torch; print(torch.__version__)'): $(tail -3 "$out/rank0.log")"
  kill "$pid" 2>/dev/null
  exit 1
fi
start=$(date +%s.%N)
printf x >"$work/pipe_0.pipe"
for _ in $(seq 300); do [ -s "$work/rank_0" ] && break; sleep 0.1; done
end=$(date +%s.%N)
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -s "$work/rank_0" ] || { echo "gpu: flight recorder: no dump within 30 s of the ask"; exit 1; }
cp "$work/rank_0" "$out/rank_0"
python3 - "$out/rank_0" "$start" "$end" <<'EOF'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
last = d["entries"][-1]
print("gpu: flight recorder: dump %.1fs after the ask, version %s, %d entries, last %s #%d %s; keys %s" % (
    float(sys.argv[3]) - float(sys.argv[2]), d["version"], len(d["entries"]), last["profiling_name"],
    last["collective_seq_id"], last["state"], sorted(d)))
EOF
