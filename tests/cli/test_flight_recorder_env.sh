#!/usr/bin/env bash
# The job script points torch's Flight Recorder at the attempt's folder under
# the log base (docs/running.md "Flight Recorder"), keeps every variable the
# run set itself, and sets no pipe where the folder cannot hold one (torch
# would fail to start its process group). The script's own function runs
# here, taken out of a rendered script; and a run without the watchdog has
# none of it.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" -o scripts
expect_code 0
script=scripts/local-cpu.sbatch
sed -n '/^ddpctl_flight_recorder() {$/,/^}$/p' "$script" >fr.sh
[ "$(wc -l <fr.sh)" -gt 5 ] || fail "no ddpctl_flight_recorder function in $script"
# shellcheck disable=SC2016  # the script's own words, not expanded here
grep -qx 'ddpctl_flight_recorder "$ddpctl_log_base.restart$ddpctl_attempt.fr"' "$script" ||
  fail "the script does not call it with the attempt's folder"

# vars ENV...: the Flight Recorder's variables after the function ran with ENV (and its stderr).
vars() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  env -i PATH="$PATH" "$@" bash -c '. ./fr.sh; set -euo pipefail; ddpctl_flight_recorder "$PWD/logs/job_7.restart1.fr" 2>err
    env | grep -E "^TORCH_(FR|NCCL)_" | sort'
}
base=$T/logs/job_7.restart1.fr
expected="TORCH_FR_BUFFER_SIZE=2000
TORCH_FR_DUMP_TEMP_FILE=$base/rank_
TORCH_NCCL_DEBUG_INFO_PIPE_FILE=$base/pipe_
TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$base/rank_
TORCH_NCCL_DUMP_ON_TIMEOUT=1
TORCH_NCCL_TRACE_BUFFER_SIZE=2000"
got=$(vars)
[ "$got" = "$expected" ] || fail "set by the script:"$'\n'"$got"$'\n'"expected:"$'\n'"$expected"
[ -d "$base" ] || fail "the attempt's folder was not made"
[ -z "$(ls -A "$base")" ] || fail "the probe pipe was left behind: $(ls -A "$base")"
[ ! -s err ] || fail "it said something: $(cat err)"

# The run's own values, by either name, stay; so does the other name left unset.
got=$(vars TORCH_NCCL_TRACE_BUFFER_SIZE=500 TORCH_FR_DUMP_TEMP_FILE=/scratch/fr/r TORCH_NCCL_DUMP_ON_TIMEOUT=0 \
  TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/tmp/mine_)
expected="TORCH_FR_DUMP_TEMP_FILE=/scratch/fr/r
TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/tmp/mine_
TORCH_NCCL_DUMP_ON_TIMEOUT=0
TORCH_NCCL_TRACE_BUFFER_SIZE=500"
[ "$got" = "$expected" ] || fail "the run's own values:"$'\n'"$got"$'\n'"expected:"$'\n'"$expected"
got=$(vars TORCH_FR_BUFFER_SIZE=100 TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/scratch/old_)
grep -qx 'TORCH_FR_BUFFER_SIZE=100' <<<"$got" || fail "TORCH_FR_BUFFER_SIZE was changed: $got"
! grep -q 'TORCH_NCCL_TRACE_BUFFER_SIZE\|TORCH_FR_DUMP_TEMP_FILE' <<<"$got" || fail "a second name was added: $got"

# A folder that cannot hold a pipe: no pipe variable, and the batch log says why.
mkdir bin
printf '#!/bin/sh\necho "mkfifo: cannot create fifo: Operation not permitted" >&2\nexit 1\n' >bin/mkfifo
chmod +x bin/mkfifo
got=$(PATH="$T/bin:$PATH" vars)
! grep -q TORCH_NCCL_DEBUG_INFO_PIPE_FILE <<<"$got" || fail "a pipe was set where none can be made: $got"
grep -q TORCH_FR_DUMP_TEMP_FILE <<<"$got" || fail "the dump files were not set: $got"
grep -qF "ddpctl: flight recorder: $base cannot hold a pipe (its file system): no dumps on demand" err ||
  fail "the batch log does not say why: $(cat err)"

# Without the watchdog, nothing of it.
sed 's/^watchdog:.*$//' "$DDPCTL_SOURCE/configs/local-cpu.yaml" >nowatch.yaml
echo 'watchdog: false' >>nowatch.yaml
run gen nowatch.yaml -o nowatch
expect_code 0
! grep -q 'TORCH_FR\|flight_recorder' nowatch/*.sbatch || fail "the Flight Recorder is set without the watchdog"
echo ok
