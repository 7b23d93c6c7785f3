#!/usr/bin/env bash
# gen writes one script per shape, atomically, and prints their paths.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
run gen "$DDPCTL_SOURCE/configs/gilbreth-a100-hybrid.yaml" -o scripts
expect_code 0
expect_out "scripts/resnet50-4gpu-1x4.sbatch"
expect_out "scripts/resnet50-4gpu-4x1.sbatch"
n=$(find scripts -mindepth 1 | wc -l)
[ "$n" -eq 2 ] || fail "expected exactly 2 files (no temporaries left): $(find scripts)"
grep -qx '#SBATCH --nodes=4' scripts/resnet50-4gpu-4x1.sbatch || fail "4x1 script lacks --nodes=4"
grep -qx '#SBATCH --gres=gpu:1' scripts/resnet50-4gpu-4x1.sbatch || fail "4x1 script lacks --gres=gpu:1"
echo ok
