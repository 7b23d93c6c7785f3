#!/usr/bin/env bash
# 8 ddpctls submitting the same spec at once make one job: the run's lock
# serialises "look for earlier runs -> intent -> sbatch -> outcome", and the
# other 7 report the first one's job as already submitted.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Held (the spec's hold: true, checked below in squeue): what is tested is the
# lock, and a job that failed at once on a loaded machine would rightly let a
# later submit make another one.
write_long_spec job.yaml held
submit_at_once 8 job.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$already" -eq 7 ] || fail "$already submits said 'already submitted', expected 7: $(cat out.* err.*)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "Slurm has jobs $(job_ids | tr '\n' ' '), expected one"
expect_jobs_held
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run directories, expected 1"
[ "$(ledger_outcomes)" = "submitted " ] || fail "ledger: $(ledger_outcomes)"
