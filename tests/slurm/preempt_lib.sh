#!/usr/bin/env bash
# Sourced by the preemption tests (docs/running.md "When the site takes the
# nodes back"), after lib.sh; the job under test is $id. Gives
#   recipe_program            the docs' recipe block into ./program.py (a
#                             step: 0.2 s of sleep)
#   await_match ERE           until a line of the job's logs matches ERE (two
#                             minutes); sets $found, the last such line
#   await_line LOG LINE       until LOG holds LINE (two minutes)
#   preempt                   a job of `urgent` takes every node of
#                             scavenger and spot (scripts/local-slurm); sets
#                             $urgent, cancelled at exit
#   expect_saved_state STEP   the recipe's checkpoint (state.txt) holds STEP
# shellcheck disable=SC2154  # id: the test's job
recipe_program() {
  {
    printf 'import time\ndef train_one_step(step):\n    time.sleep(0.2)\n\n'
    awk '/^### Your own program/ {on = 1} on && /^```python$/ {code = 1; next} code && /^```$/ {exit} code' \
      "$DDPCTL_SOURCE/docs/running.md"
  } >program.py
  grep -q "os._exit(75)" program.py || fail "the recipe's block was not found in docs/running.md: $(cat program.py)"
}
await_match() {
  local deadline=$((SECONDS + 120)) since=$SECONDS
  until found=$(grep -rhE -- "$1" logs 2>/dev/null | tail -n1) && [ -n "$found" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no line matches '$1' in the job's logs: $(tail -n 5 logs/* 2>&1)$(slurmctld_log_of "$id")"
    pause_since "$since"
  done
}
await_line() {
  local deadline=$((SECONDS + 120)) since=$SECONDS
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no '$2' in $1: $(cat "$1" 2>&1) $(cat "logs/${JOB_NAME}_$id.err" 2>&1)$(slurmctld_log_of "$id")"
    pause_since "$since"
  done
}
preempt() {
  urgent=$(on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 300')
  at_exit "on_login scancel $urgent"
}
expect_saved_state() {
  local state
  state=$(find "$T" -name state.txt -print -quit)
  if [ -z "$state" ] || [ "$(cat "$state")" != "$1" ]; then
    fail "rank 0 said it saved step $1; the checkpoint holds: ${state:-no state.txt} $(cat "$state" 2>&1)"
  fi
}
