#!/usr/bin/env bash
# A worker killed mid-training: the launcher ends the other one and exits
# non-zero within seconds, naming the rank, how it ended and its last line.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
export DDPCTL_PROGRESS_FILE=$T/progress.json
start run --nproc-per-node 2 --model smallcnn --synthetic-size 100000 --epochs 5 --workers 0
launcher=$pid
wait_progress "$DDPCTL_PROGRESS_FILE" 1 2
victim=$(pgrep -P "$launcher" | sort -n | tail -1 || true)  # local rank 1, started second
[ -n "$victim" ] || fail "no workers under the launcher"
kill -KILL "$victim"
killed_at=$(date +%s.%N)
finish "$launcher" 60
ended_at=$(date +%s.%N)
took=$(python3 -c "print(round($ended_at - $killed_at, 1))")
echo "launcher exited $code ${took} s after the kill"
[ "$code" -ne 0 ] || fail "launcher exited 0 after a worker died"
# The launcher gives the other worker 5 s after SIGTERM; the bound leaves room
# for a loaded 2-core machine and is far below a hang in a collective.
python3 -c "import sys; sys.exit(0 if $took < 30 else 1)" || fail "launcher took $took s to notice"
expect_in run "ddp-train: error: rank 1 (local rank 1, pid $victim) was killed by signal 9 (Killed)"
expect_in run "stopping the other workers"
if pgrep -P "$launcher" >/dev/null; then fail "workers left behind"; fi
