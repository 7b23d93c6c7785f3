#!/usr/bin/env bash
# Without preflight, sbatch itself refuses an unknown account: the user sees
# Slurm's reason and the ledger records the rejection.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
account: nobody-has-this
command: "true"
YAML
run submit job.yaml --no-preflight
expect_code 1
expect_err "sbatch rejected the job: Invalid account or account/partition combination specified"
grep -q '"outcome": "rejected"' "$(only_run_dir)/ledger.json" || fail "ledger lacks the rejection"
expect_nothing_submitted
