#!/usr/bin/env bash
# A spec error names file:line:column and field, in the documented form.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir runs
cat > runs/a.yaml <<'YAML'
name: big
cluster: gilbreth
account: lusu
gpu_type: a100-80gb
nodes: 1
time: "01:00:00"
gpus_per_node: 8
trainer: {model: resnet50}
YAML
run gen runs/a.yaml --stdout
expect_code 1
expect_err "ddpctl: error: runs/a.yaml:7:16: gpus_per_node: 8 exceeds the 4 GPUs per node of partition a100-80gb (cluster gilbreth)"
[ ! -s out ] || fail "a failed gen printed a script"
echo ok
