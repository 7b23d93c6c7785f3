#!/usr/bin/env bash
# SIGQUIT asks each worker where it is (the job agent does before a stall's
# cancel): the worker writes its rank, epoch, step and phase with how long it
# has been there, and the collectives it last entered and left, into
# $DDPCTL_LOG_BASE.state.<node>.<pid>.txt and trains on; the launcher ignores
# it.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
export DDPCTL_PROGRESS_FILE=$T/progress.json DDPCTL_LOG_BASE=$T/job_1
start run --nproc-per-node 2 --model smallcnn --synthetic-size 100000 --epochs 5 --workers 0
launcher=$pid
wait_progress "$DDPCTL_PROGRESS_FILE" 1 2
workers=$(pgrep -P "$launcher" | sort -n | tr '\n' ' ')
[ -n "$workers" ] || fail "no workers under the launcher"
kill -QUIT "$launcher"
for w in $workers; do kill -QUIT "$w"; done
for w in $workers; do
  f="$T/job_1.state.local.$w.txt"
  for _ in $(seq 100); do [ -s "$f" ] && break; sleep 0.1; done
  [ -s "$f" ] || fail "worker $w wrote no state to $f"
  echo "worker $w: $(cat "$f")"
  grep -qE "^ddp-train: rank [01]: epoch [0-9]+, step [0-9]+ of [0-9]+: .* for [0-9]+ s; collectives: entered #[1-9][0-9]* [^,]+, left #[0-9]+ [^,]+$" "$f" ||
    fail "the state of worker $w does not say rank, epoch, step, phase and collectives: $(cat "$f")"
done
# Both go on training: the launcher and its workers are all still there.
kill -0 "$launcher" 2>/dev/null || fail "the launcher ended on SIGQUIT"
for w in $workers; do kill -0 "$w" 2>/dev/null || fail "worker $w ended on SIGQUIT"; done
kill -TERM "$launcher"
finish "$launcher" 60
