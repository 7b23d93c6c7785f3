#!/usr/bin/env bash
# --stdout prints instead of writing; --shape picks one shape.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
run gen "$DDPCTL_SOURCE/configs/gilbreth-a100-hybrid.yaml" --stdout --shape 4x1
expect_code 0
expect_out "#SBATCH --job-name=resnet50-4gpu-4x1"
files=$(find . -mindepth 1 | sort | tr '\n' ' ')
[ "$files" = "./err ./out " ] || fail "--stdout wrote files: $files"
run gen "$DDPCTL_SOURCE/configs/gilbreth-a100-hybrid.yaml" --stdout --shape 4x2
expect_code 1
expect_err "ddpctl: error: --shape: no shape labelled '4x2' (did you mean '4x1'?); shapes: 1x4, 4x1"
echo ok
