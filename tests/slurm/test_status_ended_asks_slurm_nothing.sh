#!/usr/bin/env bash
# Once Slurm can no longer change how a job ended (squeue has forgotten it,
# sacct says how it ended), status records the end in the run's ledger: the
# next `status --all`, `cancel` and `logs` make no Slurm call at all, and a
# cancelled job's explanation (who cancelled it) still shows, from the ledger.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec done.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
write_long_spec held.yaml held
sed -i "s/^name: .*/name: $JOB_NAME-held/" held.yaml
run submit done.yaml --follow
expect_code 0
done_id=$(submitted_job_id)
run submit held.yaml
expect_code 0
held_id=$(submitted_job_id)
on_login scancel "$held_id"
wait_for_sacct "$done_id" COMPLETED
wait_for_sacct "$held_id" CANCELLED

# squeue keeps an ended job for MinJobAge (300 s), then answers for it as
# for any id it does not know: exit 1, "Invalid job id specified". The fake
# answers so at once; sacct, sinfo and scontrol are the real ones. Each
# logs its call.
# shellcheck disable=SC2016  # expanded when the fakes run
fake_command squeue 'echo "squeue $*" >>"$CALLS"; echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1'
for c in sacct sinfo scontrol; do
  # shellcheck disable=SC2016
  fake_command "$c" 'echo "$(basename "$0") $*" >>"$CALLS"; exec "$REAL" "$@"'
done
export CALLS="$T/calls"
: >"$CALLS"
run status --all
expect_code 0
first=$(cat "$T/out")
echo "first status --all:"$'\n'"$first"
grep -qE "^$JOB_NAME-[^ ]* +$done_id +[^ ]+ +COMPLETED " "$T/out" || fail "no COMPLETED row for job $done_id: $first"
grep -qE "^$JOB_NAME-held-[^ ]* +$held_id +[^ ]+ +CANCELLED .*was cancelled by root$" "$T/out" ||
  fail "no CANCELLED row saying who cancelled job $held_id: $first"
[ "$(grep -c '^sacct' "$CALLS")" -eq 1 ] || fail "the first status asked sacct other than once: $(cat "$CALLS")"
grep -q "^sacct .*--jobs=$done_id,$held_id\b\|^sacct .*--jobs=$held_id,$done_id\b" "$CALLS" ||
  fail "sacct was not asked for both jobs in one call: $(cat "$CALLS")"

: >"$CALLS"
run status --all
expect_code 0
[ ! -s "$CALLS" ] || fail "the second status --all asked Slurm: $(cat "$CALLS")"
[ "$(cat "$T/out")" = "$first" ] || fail "the second status differs from the first:"$'\n'"$(cat "$T/out")"$'\n'"first:"$'\n'"$first"
run status --all --json
expect_out '"what": "was cancelled by root"'
expect_out '"source": "ledger"'
run cancel "$JOB_NAME-held"
expect_code 0
expect_out "job $held_id: already ended (CANCELLED)"
run logs "$JOB_NAME"
[ ! -s "$CALLS" ] || fail "status --json, cancel or logs of ended runs asked Slurm: $(cat "$CALLS")"
