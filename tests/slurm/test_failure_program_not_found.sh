#!/usr/bin/env bash
# A program the nodes cannot run is caught before the queue wait, as a
# file:line:field error, for a list command, a shell line and trainer.program;
# nothing is submitted. The bundled trainer is found beside ddpctl.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec list.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [train-my-model, --epochs, "3"]
YAML
run submit list.yaml
expect_code 1
expect_err "ddpctl: error: list.yaml:7:10: command[0]: train-my-model is not on PATH here; the job would fail with \"command not found\" (exit code 127) after its wait; give its path, or load the module that provides it (modules:); --no-preflight submits anyway"

write_spec line.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "train-my-model --epochs 3 | tee train.log"
YAML
run submit line.yaml
expect_code 1
expect_err "ddpctl: error: line.yaml:7:10: command: train-my-model is not on PATH here"

write_spec trainer.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
trainer:
  program: $T/bin/ddp-train
  data: synthetic
YAML
run submit trainer.yaml
expect_code 1
expect_err "ddpctl: error: trainer.yaml:8:12: trainer.program: $T/bin/ddp-train is not an executable file here; the job would fail with exit code 126 or 127 after its wait"
[ ! -e runs ] || [ -z "$(ls runs)" ] || fail "a run was recorded for a spec that failed preflight: $(ls runs)"
[ -z "$(job_ids)" ] || fail "jobs were submitted: $(job_ids)"

# A shell line starting with a builtin or a variable is the user's shell code: not checked.
write_spec builtin.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "cd \$HOME && exec \$TRAINER"
YAML
run submit builtin.yaml --dry-run
expect_code 0
