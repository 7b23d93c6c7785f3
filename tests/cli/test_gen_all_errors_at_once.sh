#!/usr/bin/env bash
# Every problem is reported in one pass, with a count.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cat > a.yaml <<'YAML'
name: "bad name"
cluster: local
gpus_per_nod: 2
gpus_per_node: 1
partition: gpu
time: 61:00
env: {MASTER_PORT: 1}
trainer: {model: resnet51}
YAML
run gen a.yaml -o out.d
expect_code 1
expect_err "ddpctl: error: a.yaml:1:7: name: 'bad name' must be a Slurm name"
expect_err "ddpctl: error: a.yaml:3:1: unknown field 'gpus_per_nod' (did you mean 'gpus_per_node'?)"
expect_err "ddpctl: error: a.yaml:7:20: env: MASTER_PORT is set by ddpctl"
expect_err "ddpctl: error: a.yaml:8:18: trainer.model: 'resnet51' must be one of 'resnet18', 'resnet50' or 'smallcnn' (did you mean 'resnet50'?)"
expect_err "ddpctl: 4 errors"
[ ! -e out.d ] || fail "gen created its output folder despite errors"
echo ok
