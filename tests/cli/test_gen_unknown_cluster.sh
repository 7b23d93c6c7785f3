#!/usr/bin/env bash
# An unknown cluster lists the known profiles; DDPCTL_CLUSTERS adds folders.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
printf 'name: x\ncluster: gilbret\ngpus_per_node: 1\ntrainer: {}\n' > a.yaml
run gen a.yaml --stdout
expect_code 1
expect_err "ddpctl: error: a.yaml:2:10: cluster: no cluster profile named 'gilbret' (did you mean 'gilbreth'?); known profiles:"
mkdir mine
sed 's/^name: local/name: gilbret/' "$DDPCTL_SOURCE/configs/clusters/local.yaml" > mine/gilbret.yaml
printf 'partition: gpu\n' >> a.yaml
DDPCTL_CLUSTERS="$T/mine" run gen a.yaml --stdout
expect_code 0
expect_out "cluster gilbret"
echo ok
