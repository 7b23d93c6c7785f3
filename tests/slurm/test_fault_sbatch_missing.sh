#!/usr/bin/env bash
# No sbatch on PATH: a clear error, and the ledger says nothing was submitted.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
mkdir -p "$T/bin"
for tool in squeue sinfo sacct sacctmgr scontrol scancel; do ln -s "$(slurm_command_path "$tool")" "$T/bin/$tool"; done
# The job's program too: the preflight looks it up on this PATH.
ln -s "$(command -v sleep)" "$T/bin/sleep"
set +e
"$LOCAL_SLURM" exec -- env PATH="$T/bin" "$DDPCTL" submit job.yaml >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 1
expect_err "sbatch rejected the job: sbatch was not found on PATH"
[ "$(ledger_outcomes)" = "rejected " ] || fail "ledger: $(ledger_outcomes)"
