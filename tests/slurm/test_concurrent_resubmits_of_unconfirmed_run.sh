#!/usr/bin/env bash
# A run whose sbatch answer was lost (unconfirmed), then 8 ddpctls
# re-submitting it at once: the first settles the attempt (absent) and
# submits one job, the rest report it; the ledger keeps every attempt.
# shellcheck disable=SC2016  # the fake's body expands when it runs
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Held (the spec's hold: true, checked below in squeue): what is tested is the
# lock, and a job that failed at once on a loaded machine would rightly let a
# later submit make another one.
write_long_spec job.yaml held
fake_command sbatch 'echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
exit 1'
run submit job.yaml
expect_code 1
expect_err "recorded as unconfirmed"
[ "$(ledger_outcomes)" = "unconfirmed " ] || fail "ledger: $(ledger_outcomes)"
export PATH=${PATH#"$T/fakebin:"}
submit_at_once 8 job.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "Slurm has jobs $(job_ids | tr '\n' ' '), expected one"
expect_jobs_held
[ "$(ledger_outcomes)" = "absent submitted " ] || fail "ledger: $(ledger_outcomes) (expected every attempt: absent submitted)"
run cancel "$JOB_NAME"
expect_code 0
expect_out "CANCELLED"
[ -z "$(job_ids)" ] || fail "cancel left jobs $(job_ids | tr '\n' ' ')"
