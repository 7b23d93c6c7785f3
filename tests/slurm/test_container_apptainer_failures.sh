#!/usr/bin/env bash
# What goes wrong in an Apptainer job is explained as outside a container:
# a missing image is refused before the queue at the spec's line; with
# --no-preflight, the image missing on the nodes and a bind source missing
# there are each named by status in words; a rank's exception inside the
# image names the rank and the exception. Runs on the 26.05 cluster.
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
sif=$(container_test_image apptainer)
cp "$DDPCTL_SOURCE/tests/trainer/torchrun_program.py" .
# spec FILE IMAGE [ARGS] [MOUNT]: a 2 x 1 job of the program in IMAGE.
spec() {
  write_spec "$1" <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
mem: 500M
command: [python3, torchrun_program.py, --epochs, "1", --steps, "5" ${3:+, $3}]
container:
  runtime: apptainer
  image: $2
  options: [--no-privs]
  env: {USE_LIBUV: "0"}
  mounts: [${4:-}]
YAML
}

# Before the queue: the spec's line, nothing submitted.
spec missing.yaml "$T/images/missing.sif"
run submit missing.yaml
expect_code 1
expect_err "ddpctl: error: missing.yaml:13:10: container.image: $T/images/missing.sif does not exist; the job would fail at start, after its wait in the queue"
[ -z "$(job_ids)" ] || fail "a job was submitted for a missing image: $(job_ids)"

# ending RUN: status's line for the run once its job failed.
ending() {
  local run=$1 deadline=$((SECONDS + 120))
  while :; do
    run status "$run"
    grep -q " FAILED " "$T/out" && return 0
    [ "$SECONDS" -lt "$deadline" ] || fail "the job of $run did not fail: $(cat "$T/out" "$T/err")"
    sleep 0.5
  done
}

# On the nodes: the image is gone (as when a shared file system is not
# mounted there); --no-preflight submits what the check would refuse.
cp "$sif" "$T/gone.sif"
spec gone.yaml "$T/gone.sif"
rm "$T/gone.sif"
run submit gone.yaml --no-preflight
expect_code 0
ending "$JOB_NAME"
expect_out "could not start its container: the image could not be found or imported"
expect_out "gone.sif"

# A bind source the nodes lack.
mkdir -p "$T/scratch"
spec bind.yaml "$sif" "" "$T/scratch:/scratch"
rmdir "$T/scratch"
run submit bind.yaml --no-preflight --again
expect_code 0
id=$(submitted_job_id)
deadline=$((SECONDS + 120))
while :; do
  run status "$JOB_NAME" --json
  grep -q "\"job_id\": \"$id\"" "$T/out" && grep -q "a path to bind into it does not exist on the node" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not explain the missing bind source of job $id: $(cat "$T/out" "$T/err")"
  sleep 0.5
done

# A rank's exception inside the image.
spec fail.yaml "$sif" '--fail-rank, "1"'
run submit fail.yaml --again
expect_code 0
id=$(submitted_job_id)
deadline=$((SECONDS + 120))
while :; do
  run status "$JOB_NAME"
  grep -q "rank 1 on g2 exited with exit code 1: ValueError: bad batch on rank 1 of 2" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not name rank 1's exception in job $id: $(cat "$T/out" "$T/err")"
  sleep 0.5
done
