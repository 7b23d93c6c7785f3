#!/usr/bin/env bash
# The run lock, without a cluster (tests/cli/fake_slurm's queue): 8 ddpctls
# submitting the same spec at once make one job, the other 7 report it as
# already submitted ("look for earlier runs -> intent -> sbatch -> outcome"
# is serialised); and a run whose sbatch answer was lost (unconfirmed),
# re-submitted by 8 at once, is settled (absent) and submitted by one, the
# ledger keeping every attempt. The job is held (hold: true) and stays
# PENDING in the fake queue, so an earlier job is always live.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
write_job() {
  cat >"$1" <<YAML
name: $2
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
YAML
}
# submit_at_once N SPEC: N ddpctls submit SPEC at once; each must succeed.
submit_at_once() {
  local n=$1 spec=$2 i pids=()
  rm -f out.* err.*
  for i in $(seq "$n"); do
    "$DDPCTL" submit "$spec" --no-preflight >"out.$i" 2>"err.$i" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "submit $((i + 1)) failed: $(cat "out.$((i + 1))" "err.$((i + 1))")"
  done
}
# ledger_outcomes NAME: the outcome of every attempt of the one run of NAME.
ledger_outcomes() {
  local dirs=("$DDPCTL_RUNS/$1"-*/)
  [ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run folders of $1, expected 1: $(ls "$DDPCTL_RUNS")"
  sed -n 's/.*"outcome": "\([a-z]*\)".*/\1/p' "${dirs[0]}ledger.json" | tr '\n' ' '
}
jobs_of() { grep -c "$(printf '\x1f')$1$(printf '\x1f')" "$FAKE_SLURM/jobs" || true; }

# 1. Eight at once: one job.
write_job one.yaml one
submit_at_once 8 one.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$already" -eq 7 ] || fail "$already submits said 'already submitted', expected 7: $(cat out.* err.*)"
[ "$(jobs_of one)" -eq 1 ] || fail "the queue has $(jobs_of one) jobs named one, expected 1: $(cat "$FAKE_SLURM/jobs")"
[ "$(grep -c '^sbatch ' "$FAKE_SLURM/calls")" -eq 1 ] || fail "sbatch ran more than once: $(cat "$FAKE_SLURM/calls")"
[ "$(ledger_outcomes one)" = "submitted " ] || fail "ledger: $(ledger_outcomes one)"
# The seven learnt it from the queue: the fake answered squeue, the job held.
grep -q "^squeue -h -a -t all" "$FAKE_SLURM/calls" || fail "nobody asked the fake squeue: $(cat "$FAKE_SLURM/calls")"
grep -q "$(printf '\x1f')one$(printf '\x1f').*$(printf '\x1f')PENDING$(printf '\x1f')JobHeldUser$(printf '\x1f')" "$FAKE_SLURM/jobs" ||
  fail "the job is not held in the fake queue: $(cat "$FAKE_SLURM/jobs")"

# 2. Its sbatch answer lost, then eight at once: settled, one job.
write_job lost.yaml lost
echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >"$FAKE_SLURM/sbatch_fails"
run submit lost.yaml --no-preflight
expect_code 1
expect_err "recorded as unconfirmed"
[ "$(ledger_outcomes lost)" = "unconfirmed " ] || fail "ledger: $(ledger_outcomes lost)"
rm "$FAKE_SLURM/sbatch_fails"
submit_at_once 8 lost.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$(jobs_of lost)" -eq 1 ] || fail "the queue has $(jobs_of lost) jobs named lost, expected 1: $(cat "$FAKE_SLURM/jobs")"
[ "$(ledger_outcomes lost)" = "absent submitted " ] || fail "ledger: $(ledger_outcomes lost) (expected every attempt: absent submitted)"
echo ok
