#!/usr/bin/env bash
# cancel RUN stops its running job and says so only once Slurm confirms it.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
YAML
run submit job.yaml --wait
expect_code 0
expect_out "RUNNING"
run cancel "$JOB_NAME"
expect_code 0
expect_out "CANCELLED"
run status "$JOB_NAME"
expect_out "CANCELLED"
grep -q '"cancel_requested_at": "20' "$(only_run_dir)/ledger.json" || fail "ledger lacks the cancel request"
id=$(sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' "$(only_run_dir)/ledger.json")
state=$(on_login squeue -h -t all -j "$id" -o %T)
[ "$state" = CANCELLED ] || fail "squeue says $state"
