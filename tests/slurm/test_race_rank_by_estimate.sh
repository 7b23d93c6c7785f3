#!/usr/bin/env bash
# --rank-by-estimate and race --plan ask `sbatch --test-only` when each shape
# would start: a free shape ranks first, a blocked one later, and a shape the
# cluster cannot run is dropped with Slurm's reason (or the preflight's) and
# never submitted. status shows the dropped shape and why.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The "drift" profile believes a100-80gb nodes have 8 GPUs; they have 4, so
# shape "eight" passes the spec checks and only the live cluster refuses it.
use_drifted_profile
on_login sbatch --parsable -J "$JOB_NAME-blocker" -p a100-80gb -N 2 --exclusive -t 5 --wrap "sleep 300" >blocker.id
# shellcheck disable=SC2016  # expanded when the test ends
at_exit 'on_login scancel "$(cat "$T/blocker.id")"'
wait_for_job "$(cat blocker.id)" RUNNING
cat >job.yaml <<YAML
name: $JOB_NAME
cluster: drift
time: "00:05:00"
partition: a100-80gb
gpus_per_node: 0
procs_per_node: 1
command: 'echo "trained on \$(hostname)"'
alternatives:
  - {partition: cpu, label: cpu}
  - {partition: a100-80gb, gpus_per_node: 8, procs_per_node: 8, gpu_type: a100, label: eight}
YAML

# The plan, with Slurm's own verdict (no preflight): nothing is submitted.
run race --plan --no-preflight job.yaml
expect_code 0
expect_out "shapes by estimated start (sbatch --test-only)"
grep -Eq '^  1 +cpu +now +g[1-4] +cpu' "$T/out" || fail "cpu is not ranked first, starting now: $(cat "$T/out")"
grep -Eq '^  2 +1x1 +in [0-9]+m[0-9]+s \(.*\) +a[12] +a100-80gb' "$T/out" ||
  fail "the blocked shape is not second with a later start: $(cat "$T/out")"
grep -Eq '^  - +eight +never \(dropped\) .*Slurm says: Requested node configuration is not available' "$T/out" ||
  fail "shape eight is not dropped with Slurm's reason: $(cat "$T/out")"
expect_out "a race would submit cpu, 1x1; nothing was submitted"
expect_nothing_submitted
[ ! -e "$DDPCTL_RUNS" ] || [ -z "$(ls -A "$DDPCTL_RUNS")" ] || fail "the plan recorded a run"

# With the preflight the same shape is dropped earlier, with the spec's line.
run race --plan job.yaml
expect_code 0
expect_out "preflight: job.yaml:10:"
expect_out "8 a100 GPUs per node asked, but nodes in partition a100-80gb have at most 4"

# Submit ranked: the dropped shape is never submitted; the free one wins.
run submit job.yaml --rank-by-estimate --no-preflight --wait
expect_code 0
expect_out "Slurm says: Requested node configuration is not available"
expect_out "submitted race of job"
expect_out "race: won by shape cpu (job"
run_dir=$(only_run_dir)
[ ! -e "$run_dir/race/jobs/eight" ] || fail "the dropped shape was submitted"
[ "$(grep -c '"outcome"' "$run_dir/ledger.json")" = 2 ] || fail "expected 2 attempts: $(cat "$run_dir/ledger.json")"
# cpu was ranked first, so it was submitted first.
# The first match without `head` (no SIGPIPE under pipefail).
first=$(sed -n 's/.*"shape": "\([^"]*\)".*/\1/p' "$run_dir/ledger.json")
first=${first%%$'\n'*}
[ "$first" = cpu ] || fail "the first submitted shape is $first, not cpu"
run status "$(basename "$run_dir")"
expect_code 0
grep -Eq 'eight +DROPPED .*not submitted: Slurm says: Requested node configuration is not available' "$T/out" ||
  fail "status does not show the dropped shape: $(cat "$T/out")"

# A ranking that leaves nothing: every shape's reason, nothing submitted.
cat >never.yaml <<YAML
name: $JOB_NAME
cluster: drift
time: "00:05:00"
partition: a100-80gb
gpus_per_node: 8
gpu_type: a100
command: 'echo never'
alternatives:
  - {nodes: 2, label: 2x8}
YAML
before=$(job_ids | wc -l)
run race never.yaml --rank-by-estimate --no-preflight
expect_code 1
expect_err "no shape of the race can run: shape 1x8: Slurm says: Requested node configuration is not available; shape 2x8: Slurm says:"
[ "$(job_ids | wc -l)" = "$before" ] || fail "a job was submitted for a race that cannot run"
