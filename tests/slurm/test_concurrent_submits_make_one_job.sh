#!/usr/bin/env bash
# 8 ddpctls submitting the same spec at once make one job: the run's lock
# serialises "look for earlier runs -> intent -> sbatch -> outcome", and the
# other 7 report the first one's job as already submitted.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Held (sbatch's $SBATCH_HOLD): what is tested is the lock, and a job that
# failed at once on a loaded machine would rightly let a later submit make
# another one.
export SBATCH_HOLD=1
write_long_spec job.yaml
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$LOCAL_SLURM" exec -- "$DDPCTL" submit job.yaml >"out.$i" 2>"err.$i" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "submit $((i + 1)) failed: $(cat "out.$((i + 1))" "err.$((i + 1))")"
done
submitted=$(cat out.* | grep -c "^submitted job" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$already" -eq 7 ] || fail "$already submits said 'already submitted', expected 7: $(cat out.* err.*)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "Slurm has jobs $(job_ids | tr '\n' ' '), expected one"
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run directories, expected 1"
[ "$(ledger_outcomes)" = "submitted " ] || fail "ledger: $(ledger_outcomes)"
