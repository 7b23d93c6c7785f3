#!/usr/bin/env bash
# report joins a run's metrics file (written here by a program of the user's
# own, through $DDPCTL_METRICS_FILE) with Slurm's record of the job: the
# throughput from the file, the state and wall time from Slurm.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >"$T/trainer.sh" <<'SH'
#!/bin/bash
echo '{"epoch": 1, "epochs": 2, "img_per_s": 80.0, "epoch_s": 1.0, "train_loss": 2.5}' >>"$DDPCTL_METRICS_FILE"
sleep 2
echo '{"epoch": 2, "epochs": 2, "img_per_s": 100.0, "epoch_s": 1.0, "train_loss": 1.5}' >>"$DDPCTL_METRICS_FILE"
SH
chmod +x "$T/trainer.sh"
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [$T/trainer.sh]
YAML
run submit job.yaml --follow
expect_code 0
expect_out "COMPLETED"
run report "$JOB_NAME" --format json
expect_code 0
json=$(cat "$T/out")
grep -q '"img_per_s": 100.0' <<<"$json" || fail "throughput is not the mean after the first epoch: $json"
grep -q '"state": "COMPLETED"' <<<"$json" || fail "state is not Slurm's: $json"
grep -q '"wall_source": "slurm"' <<<"$json" || fail "wall time is not Slurm's: $json"
grep -q '"epochs_done": 2' <<<"$json" || fail "epochs: $json"
wall=$(sed -n 's/.*"wall_s": \([0-9.]*\).*/\1/p' <<<"$json")
[ -n "$wall" ] || fail "no wall time: $json"
[ "${wall%%.*}" -ge 2 ] || fail "wall time ${wall:-missing} s is shorter than the job's 2 s sleep: $json"
run report "$JOB_NAME"
expect_code 0
expect_out "COMPLETED"
