#!/usr/bin/env bash
# With slurmctld stopped, a running job's state is UNKNOWN, never gone or finished.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck disable=SC2016  # expanded when the test ends
at_exit '"$LOCAL_SLURM" ctld start'
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
YAML
run submit job.yaml --wait
expect_code 0
# Stop the controller only once the step runs: srun needs it to create the
# step, and a job whose srun cannot reach it fails (that is not this test).
id=$(job_ids)
for _ in $(seq 300); do [ -e "logs/${JOB_NAME}_$id.restart0.0.out" ] && break; sleep 0.2; done
[ -e "logs/${JOB_NAME}_$id.restart0.0.out" ] || fail "job $id's step did not start within 60 s: $(ls logs 2>&1)"
"$LOCAL_SLURM" ctld stop >/dev/null || fail "local-slurm ctld stop failed"
run status "$JOB_NAME"
expect_code 0
expect_out "UNKNOWN"
expect_err "Slurm could not be asked"
"$LOCAL_SLURM" ctld start >/dev/null || fail "local-slurm ctld start failed"
run status "$JOB_NAME"
expect_out "RUNNING"
