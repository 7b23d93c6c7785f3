#!/usr/bin/env bash
# `ddpctl race A.yaml B.yaml`: two separate specs race as one group. A's
# partition is full, so B wins and trains and A is cancelled; each shape keeps
# its own spec and output folder, and `logs RUN` shows the winner's output.
# Specs that cannot race together are refused before anything is submitted.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
on_login sbatch --parsable -J "$JOB_NAME-blocker" -p a100-80gb -N 2 --exclusive -t 5 --wrap "sleep 300" >blocker.id
# shellcheck disable=SC2016  # expanded when the test ends
at_exit 'on_login scancel "$(cat "$T/blocker.id")"'
# The partition is full only once the blocker runs.
wait_for_job "$(cat blocker.id)" RUNNING
write_spec a.yaml <<'YAML'
partition: a100-80gb
gpus_per_node: 0
procs_per_node: 1
command: 'echo "A trained on $(hostname)"'
YAML
write_spec b.yaml <<'YAML'
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
output_dir: logs-b
command: 'echo "B trained on $(hostname) as node $SLURM_NODEID"'
YAML

# Refused: the same spec twice, two specs whose shapes share a label and
# name, and specs on different clusters.
run race a.yaml a.yaml
expect_code 1
expect_err "a.yaml: this spec is given twice"
cp a.yaml a2.yaml
run race a.yaml a2.yaml
expect_code 1
expect_err "two shapes of the race would both be labelled $JOB_NAME-1x1"
use_drifted_profile
sed 's/^cluster: local/cluster: drift/' b.yaml >c.yaml
run race a.yaml c.yaml
expect_code 1
expect_err "c.yaml:2:10: cluster: a race runs on one cluster"
expect_nothing_submitted

run race a.yaml b.yaml --wait
expect_code 0
expect_out "submitted race of job"
expect_out "race: won by shape 2x1 (job"
run_dir=$(only_run_dir)
for f in spec.yaml spec.2.yaml; do [ -f "$run_dir/$f" ] || fail "$f was not kept: $(ls "$run_dir")"; done
a=$(cat "$run_dir/race/jobs/1x1")
b=$(cat "$run_dir/race/jobs/2x1")
wait_for_sacct "$b" COMPLETED
wait_for_sacct "$a" CANCELLED
[ "$(on_login sacct -n -X -j "$a" -o AllocNodes | tr -d ' ')" = 0 ] || fail "shape A's job $a was given nodes"
run logs "$(basename "$run_dir")"
expect_code 0
expect_out "logs-b/${JOB_NAME}_$b.restart0.0.out"
expect_out "B trained on g"
run status "$(basename "$run_dir")"
expect_code 0
expect_out "won by shape 2x1 (job $b)"
expect_out "lost the race: cancelled by the winner"
