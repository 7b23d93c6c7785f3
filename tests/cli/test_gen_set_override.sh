#!/usr/bin/env bash
# --set overrides fields; a bad override is blamed on the command line.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout --set nodes=3 --set trainer.epochs=7
expect_code 0
expect_out "#SBATCH --nodes=3"
expect_out "--epochs=7"
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout --set nodes=9
expect_code 1
expect_err "ddpctl: error: --set nodes=9: nodes: 9 exceeds the 4 nodes of partition cpu (cluster local)"
echo ok
