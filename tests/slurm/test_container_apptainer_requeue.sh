#!/usr/bin/env bash
# Requeue with an image that has no Slurm commands (Lightning#21404,
# pyxis#129: a requeue from inside the container fails there): the batch
# shell, outside the image, passes Slurm's signal to the ranks inside, they
# checkpoint and stop (75), and the script requeues the job; the second
# attempt runs in the image again. Runs on the 26.05 cluster.
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
sif=$(container_test_image apptainer)
# Asked on a node (the login host's apptainer is only there to be found).
slurm_in_image=$(on_login srun -p cpu -N1 -n1 apptainer exec --no-privs "$sif" sh -c 'command -v scontrol sbatch; echo checked' 2>&1 || true)
[ "$slurm_in_image" = checked ] || fail "the test image $sif has Slurm commands, or could not be asked: $slurm_in_image"
cp "$DDPCTL_SOURCE/tests/trainer/torchrun_program.py" .
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
mem: 500M
requeue: {signal: USR1, grace: 60, max_restarts: 2}
command: [python3, torchrun_program.py, --until-usr1]
container:
  runtime: apptainer
  image: $sif
  options: [--no-privs]
  env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
# await LOG LINE: LINE appears in LOG within two minutes.
await() {
  local deadline=$((SECONDS + 120))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no '$2' in $1: $(cat "$1" 2>&1) $(cat "logs/${JOB_NAME}_$id.err" 2>&1)$(slurmctld_log_of "$id")"
    sleep 0.2
  done
}
await "logs/${JOB_NAME}_$id.restart0.0.out" "training until SIGUSR1"
# What Slurm does `grace` seconds before the time limit (--signal=B:USR1@60).
on_login scancel --batch --signal=USR1 "$id"
await "logs/${JOB_NAME}_$id.restart0.1.out" "rank 1: checkpointed; stopping"
await "logs/${JOB_NAME}_$id.err" "requeueing job $id (restart 1 of 2)"
# The second attempt runs in the image again. Slurm holds a requeued job
# until a BeginTime minutes away; the test moves it to now (scontrol update
# StartTime=now), as a user may.
deadline=$((SECONDS + 120))
until grep -q "training until SIGUSR1" "logs/${JOB_NAME}_$id.restart1.0.out" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "attempt 2 did not start training: $(cat "logs/${JOB_NAME}_$id.err")$(slurmctld_log_of "$id")"
  on_login scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 || true
  sleep 1
done
grep -q "ddpctl: container" "logs/${JOB_NAME}_$id.restart1.0.out" && fail "attempt 2 did not start its container"
run status "$JOB_NAME"
expect_out "attempt 2 of 3 (requeued at the time limit)"
