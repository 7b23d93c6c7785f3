#!/usr/bin/env bash
# The sitecustomize's Flight Recorder pipe (src/agent/flight_recorder_pipe.cpp), in
# real Python over a stand-in torch whose _dump_fr_trace returns known bytes
# (the real torch 2.14 run is tests/slurm/test_watchdog_flight_recorder.sh and
# tests/unit/data/flight_recorder/record.sh): a rank of a Gloo group gets
# <stem><rank>.pipe once its group is up, and `ddpctl job stacks` asking
# through it gets <prefix><rank> written whole; the program's output is
# unchanged. No pipe for an NCCL group (torch makes its own), for a torch
# without _dump_fr_trace (1.13), nor in a process without RANK; a forked child
# does not keep the pipe open. A dump that fails leaves <prefix><rank>.error
# saying why (the watchdog's collector reads it); the next ask clears it.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -c 'import os; os.mkfifo, os.register_at_fork' 2>/dev/null || { echo "skipped: $PY has no os.mkfifo/register_at_fork"; exit 77; }
hook=$("$DDPCTL" job python-hook --log-base "$T/logs/job_7")
grep -q '^def _ddpctl_flight_recorder' "$hook/sitecustomize.py" || fail "no Flight Recorder part in the hook"
mkdir -p fake/torch/distributed fake/torch/_C fake13/torch/distributed fr
cat >fake/torch/__init__.py <<'EOF'
from . import _C, distributed
EOF
cat >fake/torch/_C/__init__.py <<'EOF'
from . import _distributed_c10d
EOF
cat >fake/torch/_C/_distributed_c10d.py <<'EOF'
import os, pickle
def _dump_fr_trace(includeCollectives=None, includeStackTraces=None, onlyActive=None):
    if os.path.exists(os.environ.get("FAKE_DUMP_FAILS", "/nonexistent")):
        raise RuntimeError("the stand-in cannot dump now")
    return pickle.dumps({"version": "2.10", "entries": [], "pg_config": {}, "pg_status": {}}, protocol=2)
EOF
cat >fake/torch/distributed/__init__.py <<'EOF'
import os
_backend = None
def is_available(): return True
def is_initialized(): return _backend is not None
def init_process_group(backend):
    global _backend
    _backend = backend
def get_backend(group=None): return _backend
def get_rank(): return int(os.environ["RANK"])
EOF
# torch 1.13's shape: torch.distributed, no _dump_fr_trace.
cp fake/torch/distributed/__init__.py fake13/torch/distributed/
printf 'import types\nfrom . import distributed\n_C = types.SimpleNamespace(_distributed_c10d=types.SimpleNamespace())\n' \
  >fake13/torch/__init__.py
cat >prog.py <<'EOF'
import os, sys, threading, time
import torch
import torch.distributed as dist
def named():
    return any(t.name == "ddpctl-flight-recorder" for t in threading.enumerate())
print("thread at start:", named())
dist.init_process_group(sys.argv[1])
print("hello from rank", os.environ.get("RANK"), flush=True)
if sys.argv[2] == "wait-thread":
    # The thread looks every 2 s; once it has decided, it is gone or it serves.
    deadline = time.time() + 60
    pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + os.environ["RANK"] + ".pipe"
    while named() and not os.path.exists(pipe) and time.time() < deadline:
        time.sleep(0.1)
    print("thread:", named(), "pipe:", os.path.exists(pipe))
elif sys.argv[2] == "serve":
    pipe = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + os.environ["RANK"] + ".pipe"
    deadline = time.time() + 60
    while not os.path.exists(pipe) and time.time() < deadline:
        time.sleep(0.1)
    pid = os.fork()
    if pid == 0:
        held = [f for f in os.listdir("/proc/self/fd") if os.path.realpath("/proc/self/fd/" + f) == os.path.realpath(pipe)]
        os._exit(10 if held else 0)
    print("child kept the pipe" if os.waitpid(pid, 0)[1] >> 8 == 10 else "child let go", flush=True)
    open(sys.argv[3], "w").close()
    time.sleep(600)
EOF
export TORCH_FR_DUMP_TEMP_FILE=$T/fr/rank_ TORCH_NCCL_DEBUG_INFO_PIPE_FILE=$T/fr/pipe_

# 1. No RANK: no thread at all.
out=$(PYTHONPATH="$hook:$T/fake" "$PY" prog.py gloo none 2>&1)
[ "$out" = $'thread at start: False\nhello from rank None' ] || fail "without RANK: $out"

# 2. NCCL: torch's own pipe; ddpctl's thread steps aside and makes none.
out=$(RANK=2 PYTHONPATH="$hook:$T/fake" "$PY" prog.py nccl wait-thread 2>&1)
[ "$out" = $'thread at start: True\nhello from rank 2\nthread: False pipe: False' ] || fail "NCCL: $out"

# 3. A torch without _dump_fr_trace (1.13): no pipe.
out=$(RANK=2 PYTHONPATH="$hook:$T/fake13" "$PY" prog.py gloo wait-thread 2>&1)
[ "$out" = $'thread at start: True\nhello from rank 2\nthread: False pipe: False' ] || fail "torch 1.13: $out"
[ -z "$(ls -A fr)" ] || fail "files were made: $(ls -A fr)"

# 4. Gloo: the pipe, a dump when asked, nothing else changed.
env SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 SLURM_PROCID=3 RANK=3 DDPCTL_TRAINING=1 PYTHONPATH="$hook:$T/fake" FAKE_DUMP_FAILS="$T/dump-fails" \
  "$PY" prog.py gloo serve "$T/ready" >rank.out 2>rank.err &
pid=$!
trap 'kill $pid 2>/dev/null || true; keep_on_failure' EXIT
deadline=$((SECONDS + 90))
until [ -e ready ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the rank never got its pipe: $(cat rank.out rank.err)"
  kill -0 "$pid" || fail "the rank ended: $(cat rank.out rank.err)"
  sleep 0.1
done
[ -p fr/pipe_3.pipe ] || fail "fr/pipe_3.pipe is not a pipe: $(ls -l fr)"
SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 run job stacks --log-base "$T/logs/job_7"
expect_code 0
stacks=$T/logs/job_7.restart0.stacks.n1.txt
grep -qx "## flight recorder: dump pipes $T/fr/pipe_N.pipe" "$stacks" || fail "no flight recorder part: $(cat "$stacks")"
grep -qx "rank 3: asked" "$stacks" || fail "rank 3 was not asked: $(cat "$stacks")"
deadline=$((SECONDS + 60))
until [ -e fr/rank_3 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no dump after the ask: $(ls -l fr) $(cat rank.err)"
  sleep 0.1
done
"$PY" -c 'import pickle, sys; d = pickle.load(open(sys.argv[1], "rb")); assert d["version"] == "2.10", d' fr/rank_3 ||
  fail "the dump is not what _dump_fr_trace returned"
files=$(cd fr && printf '%s ' *)
[ "$files" = "pipe_3.pipe rank_3 " ] || fail "other files in the folder: $files"
kill -0 "$pid" || fail "the rank did not survive its dump: $(cat rank.out rank.err)"
[ "$(cat rank.out)" = $'thread at start: True\nhello from rank 3\nchild let go' ] || fail "the rank's output: $(cat rank.out)"
[ ! -s rank.err ] || fail "the rank printed to stderr: $(cat rank.err)"

# 5. A dump that fails says why in rank_3.error, and the dump stays as it was;
# the next ask that dumps removes it.
# ask CHECK: writes to the pipe, then waits until the function CHECK holds.
ask() {
  printf x >fr/pipe_3.pipe
  deadline=$((SECONDS + 60))
  until "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "not within 60 s of the ask: $1: $(ls -l fr) $(cat rank.err)"
    kill -0 "$pid" || fail "the rank ended: $(cat rank.out rank.err)"
    sleep 0.1
  done
}
touch dump-fails
before=$(stat -c %i:%Y.%y fr/rank_3)
failed_said() { [ -s fr/rank_3.error ]; }
ask failed_said
[ "$(cat fr/rank_3.error)" = "RuntimeError: the stand-in cannot dump now" ] || fail "the error file: $(cat fr/rank_3.error)"
[ "$(stat -c %i:%Y.%y fr/rank_3)" = "$before" ] || fail "the dump changed though the dump failed"
rm dump-fails
dumped_again() { [ ! -e fr/rank_3.error ] && [ "$(stat -c %i:%Y.%y fr/rank_3)" != "$before" ]; }
ask dumped_again
files=$(cd fr && printf '%s ' *)
[ "$files" = "pipe_3.pipe rank_3 " ] || fail "after the second dump, other files in the folder: $files"
kill -0 "$pid" || fail "the rank did not survive: $(cat rank.out rank.err)"
echo ok
