#!/usr/bin/env bash
# The job agent's sampler is started in the background by each node's first
# task, which then becomes the training program by exec (templates/
# launch.sh.mustache). It must end with that program, also with one that ends
# before the sampler has even started: under Slurm's proctrack/linuxproc an
# orphan is no longer the job's, and it sampled on for ever, writing into the
# user's logs folder every few seconds.
# shellcheck source=tests/cli/lib.sh
source "$DDPCTL_SOURCE/tests/cli/lib.sh"
export SLURM_JOB_ID=7 SLURMD_NODENAME=n1 DDPCTL
mkdir logs
samplers() { pgrep -f -- "job sample --log-base $T/logs/$1 " || true; }
# gone NAME: the sampler of NAME ends within 20 s (it looks every half second).
gone() {
  local deadline=$((SECONDS + 20))
  while [ -n "$(samplers "$1")" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "the sampler of a task that ended ($1) still runs: $(pgrep -af -- "job sample --log-base $T/logs/$1 ")"
    sleep 0.2
  done
}
task() {  # task NAME PROGRAM...: the launch line's shape
  bash -c '"$DDPCTL" job sample --log-base "'"$T/logs/$1"'" --interval 1 --parent $$ </dev/null >/dev/null 2>>"'"$T/err.$1"'" &
exec "$@"' task "${@:2}"
}
# A program that ends at once: gone before the sampler asked for the signal.
task quick true
gone quick
# One that runs a while (until the first sample, or the sampler's error): sampled, then the sampler ends with it.
# shellcheck disable=SC2016  # the program's own bash expands them
task slow bash -c 'end=$((SECONDS + 20)); while [ ! -s "$0" ] && [ -z "$(cat "$1")" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done' \
  "$T/logs/slow.usage.n1.jsonl" "$T/err.slow"
[ -s logs/slow.usage.n1.jsonl ] || fail "no sample was taken: $(cat err.slow)"
gone slow
[ ! -s err.quick ] || fail "the sampler said: $(cat err.quick)"
