#!/usr/bin/env bash
# The site options of a spec reach Slurm as the user wrote them: hold: true
# holds the job (squeue: JobHeldUser) until `scontrol release`, exclude:
# keeps it off a node, comment: follows ddpctl's token in the job's comment
# (and ddpctl still finds its job by that token), and `sbatch:` passes an
# option ddpctl has no field for (nice). `logs JOBID` finds the run by the
# job id that status shows. An option this sbatch lacks, and one that would
# override what ddpctl computes, are refused before anything is queued.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
account: lusu
hold: true
exclude: g1
comment: lr sweep baseline
sbatch:
  nice: 10
command: 'echo trained on $(hostname)'
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
wait_for_job "$id" PENDING
reason=$(on_login squeue -h -j "$id" -o %r)
[ "$reason" = JobHeldUser ] || fail "hold: true did not hold job $id: squeue's reason is '$reason'"
job=$(on_login scontrol show job -o "$id")
grep -q "ExcNodeList=g1 " <<<"$job" || fail "exclude: g1 did not reach Slurm: $job"
grep -q "Nice=10 " <<<"$job" || fail "sbatch: {nice: 10} did not reach Slurm: $job"
comment=$(on_login squeue -h -j "$id" -o %k)
case "$comment" in
  "ddpctl:"*" lr sweep baseline") ;;
  *) fail "the job's comment is '$comment', not ddpctl's token followed by the spec's comment" ;;
esac
run status
expect_code 0
expect_out "$id"
expect_out "PENDING"
# Submitting again finds the held job by its token: nothing is doubled.
run submit job.yaml
expect_code 0
expect_out "already submitted: job $id"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "a second job was submitted: $(job_ids | tr '\n' ' ')"
on_login scontrol release "$id"
wait_for_sacct "$id" COMPLETED 60
run logs "$id"
expect_code 0
expect_out "trained on"
node=$(on_login squeue -h -t all -j "$id" -o %N 2>/dev/null || true)
[ "$node" != g1 ] || fail "job $id ran on g1, which exclude: named"

# Refused before the queue, at the spec's line.
write_spec bad.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
sbatch:
  gpu-bnd: closest
command: 'true'
YAML
run submit bad.yaml
expect_code 1
expect_err "bad.yaml:9"
expect_err "sbatch.gpu-bnd"
expect_err "this cluster's sbatch has no option --gpu-bnd (did you mean 'gpu-bind'?)"
# An option that sbatch --help does not list (--wait-all-nodes, on every
# version here) is put to sbatch's own parser, which knows it.
write_spec unlisted.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
hold: true
sbatch:
  wait-all-nodes: 1
command: 'true'
YAML
run submit unlisted.yaml --dry-run
expect_code 0
write_spec computed.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
sbatch:
  ntasks-per-node: 4
command: 'true'
YAML
run submit computed.yaml
expect_code 1
expect_err "computed.yaml:9"
expect_err "--ntasks-per-node cannot be set through sbatch: because ddpctl computes it from the shape"
# No job of this name after $id (earlier runs of this test may still show).
for j in $(test_job_ids); do
  [ "$j" -le "$id" ] || fail "a refused spec reached Slurm: job $j (this test's jobs: $(test_job_ids))"
done
