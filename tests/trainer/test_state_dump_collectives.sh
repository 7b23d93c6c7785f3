#!/usr/bin/env bash
# A rank that hangs outside a collective is told apart by the collectives each
# worker says it has entered and left (counted, in its SIGQUIT state line):
# with --test-hang-at 1:3 (a test hook: rank 1 stops before loading step 3's
# batch) rank 1 has left #N, the step's start, and never enters #N+1, the
# gradient allreduce, where rank 0 waits for it. Both gradient engines: the
# Reducer (its allreduces counted as one, around backward) and flat buckets.
# On SIGTERM the hung rank goes on, and both stop at the next step's start.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"

# state PID: the worker's answer to SIGQUIT (it answers at once, also in a collective).
state() {
  local f="$T/job_1.state.local.$1.txt"
  rm -f "$f"
  kill -QUIT "$1"
  for _ in $(seq 100); do [ -s "$f" ] && break; sleep 0.1; done
  [ -s "$f" ] || fail "worker $1 wrote no state to $f"
  cat "$f"
}
# rank_pid RANK: the launcher's worker whose environment says RANK.
rank_pid() {
  local w
  for w in $(pgrep -P "$launcher"); do
    if tr '\0' '\n' <"/proc/$w/environ" | grep -qx "RANK=$1"; then echo "$w"; return; fi
  done
  fail "no worker of launcher $launcher has RANK=$1"
}
re='^ddp-train: rank ([01]): (.*) for [0-9]+ s; collectives: entered #([0-9]+) ([^,]*), left #([0-9]+) ([^,]*)$'

for sync in reducer flat; do
  export DDPCTL_PROGRESS_FILE=$T/progress.$sync.json DDPCTL_LOG_BASE=$T/job_1
  MASTER_PORT=$(free_port)
  start "$sync" --nproc-per-node 2 --model smallcnn --synthetic-size 100000 --epochs 1 --workers 0 --no-val \
    --sync "$sync" --test-hang-at 1:3
  launcher=$pid
  # Rank 0 prints this after the rendezvous, which both workers reach after
  # installing their SIGQUIT handler (before it, SIGQUIT would end them).
  deadline=$((SECONDS + 120))
  until grep -q '^ddp-train: 2 rank(s)' "$T/$sync.out" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no rendezvous within 120 s: $(cat "$T/$sync.out")"
    sleep 0.1
  done
  r0=$(rank_pid 0) r1=$(rank_pid 1)
  want="backward with the Reducer's gradient all_reduce"
  [ "$sync" = flat ] && want="all_reduce (gradients)"
  # Asked until rank 1 is stuck loading step 3's batch, having left the step's
  # start (#N), and rank 0 waits in the gradient allreduce (#N+1) after its
  # forward and backward (at most 120 s).
  while :; do
    s0=$(state "$r0")
    s1=$(state "$r1")
    [[ $s0 =~ $re ]] || fail "rank 0's state does not say its collectives: $s0"
    e0=${BASH_REMATCH[3]} n0=${BASH_REMATCH[4]} l0=${BASH_REMATCH[5]}
    [[ $s1 =~ $re ]] || fail "rank 1's state does not say its collectives: $s1"
    phase1=${BASH_REMATCH[2]} e1=${BASH_REMATCH[3]} l1=${BASH_REMATCH[5]} n1=${BASH_REMATCH[6]}
    if [[ $phase1 =~ ^epoch\ 1,\ step\ 3\ of\ [0-9]+:\ loading\ a\ batch$ ]] && [ "$e1" = "$l1" ] &&
      [ "$n1" = "all_reduce (the step's start)" ] && [ "$e0" -eq $((l1 + 1)) ] && [ "$l0" -eq "$l1" ] &&
      [ "$n0" = "$want" ]; then
      break
    fi
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "not rank 1 out of collectives at step 3 (left #N) and rank 0 in '$want' #N+1 within 120 s:"$'\n'"$s0"$'\n'"$s1"
    sleep 0.2
  done
  echo "$sync: $s0"
  echo "$sync: $s1"
  # A hang: asked again, both say the same numbers.
  sleep 1
  again=$(state "$r0")
  [[ $again =~ $re ]] || fail "rank 0's state does not say its collectives: $again"
  [ "${BASH_REMATCH[3]}/${BASH_REMATCH[5]}" = "$e0/$l0" ] || fail "rank 0 moved on: $again"
  again=$(state "$r1")
  [[ $again =~ $re ]] || fail "rank 1's state does not say its collectives: $again"
  [ "${BASH_REMATCH[3]}/${BASH_REMATCH[5]}" = "$e1/$l1" ] || fail "rank 1 moved on: $again"
  # The hook lets go on SIGTERM: every rank stops at the next step's start.
  kill -TERM "$launcher"
  finish "$launcher" 120
  expect_code 75 "$sync"
  expect_in "$sync" "ddp-train: stop requested: no --checkpoint-dir, nothing saved at epoch 1, step 3"
done
