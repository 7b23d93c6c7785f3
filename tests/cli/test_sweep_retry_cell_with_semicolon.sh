#!/usr/bin/env bash
# `sweep retry --cells` takes a cell by its whole name, also where one of its
# values holds ';' (which otherwise separates names), and may be repeated.
# Slurm here is stubs that refuse everything: the sweep's cells are made but
# never submitted, so every cell is one to retry, and --dry-run asks nothing.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir bin
printf '#!/bin/sh\necho "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2\nexit 1\n' >bin/sbatch
for c in squeue sacct scontrol sinfo sacctmgr srun scancel; do printf '#!/bin/sh\nexit 1\n' >"bin/$c"; done
chmod +x bin/*
PATH="$T/bin:$PATH"
cat >g.yaml <<YAML
name: g
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
grid:
  env.A: ["a;b", "a", "b"]
YAML
run sweep g.yaml --no-preflight --no-snapshot --runs runs
expect_code 1
expect_err "sbatch rejected the array"
run sweep retry g --runs runs --dry-run --cells 'A=a;b'
expect_code 0
expect_out "would retry shape 1x1: 1 cell(s), --array=0: A=a;b"
run sweep retry g --runs runs --dry-run --cells 'A=a;A=b'
expect_code 0
expect_out "would retry shape 1x1: 2 cell(s), --array=1-2: A=a; A=b"
run sweep retry g --runs runs --dry-run --cells 'A=a;b' --cells A=b
expect_code 0
expect_out "would retry shape 1x1: 2 cell(s), --array=0,2: A=a;b; A=b"
echo ok
