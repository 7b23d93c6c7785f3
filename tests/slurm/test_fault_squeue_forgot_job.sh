#!/usr/bin/env bash
# A job squeue no longer lists (past MinJobAge) is read from sacct: status
# shows how it ended, not "gone".
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
run submit job.yaml --follow
expect_code 0
# squeue that has forgotten every job: an empty queue, as after MinJobAge.
fake_command squeue 'echo "{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}}, \"errors\": [], \"jobs\": []}"'
# slurmdbd records the end a moment after the job ends.
deadline=$((SECONDS + 60))
while :; do
  run status "$JOB_NAME" --json
  grep -q '"source": "sacct"' "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "status did not read the ended job from sacct within 60 s; last status --json: $(cat "$T/out") $(cat "$T/err")"
  sleep 0.5
done
expect_code 0
expect_out '"state": "COMPLETED"'
expect_out '"source": "sacct"'
run status "$JOB_NAME"
expect_out "COMPLETED"
if grep -q $'\e\\[' "$T/out"; then fail "colour codes in piped output"; fi
