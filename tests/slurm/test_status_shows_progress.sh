#!/usr/bin/env bash
# While a job runs, status shows the trainer's progress file: epoch, a bar of
# steps, throughput and ETA.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >fake-trainer.sh <<'SH'
#!/bin/bash
# Writes progress the way the trainer's rank 0 does: a temporary file, renamed.
echo '{"epoch": 2, "epochs": 10, "step": 250, "steps": 500, "samples_per_s": 1520.4, "eta_s": 340}' >"$DDPCTL_PROGRESS_FILE.tmp"
mv "$DDPCTL_PROGRESS_FILE.tmp" "$DDPCTL_PROGRESS_FILE"
sleep 300
SH
chmod +x fake-trainer.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [$T/fake-trainer.sh]
YAML
run submit job.yaml --wait
expect_code 0
for _ in $(seq 300); do ls logs/*.progress.json >/dev/null 2>&1 && break; sleep 0.2; done
ls logs/*.progress.json >/dev/null 2>&1 || fail "the job wrote no progress file within 60 s: $(ls logs 2>&1)"
run status "$JOB_NAME"
expect_code 0
expect_out "RUNNING"
expect_out "epoch 2/10 [#####-----] 250/500 1520 img/s ETA 5m40s"
run status "$JOB_NAME" --json
expect_out '"samples_per_s": 1520.4'
