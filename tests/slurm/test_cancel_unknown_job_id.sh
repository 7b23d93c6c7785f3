#!/usr/bin/env bash
# scancel of an unknown id exits 0 silently; ddpctl cancel says it cancelled nothing.
# One version: every version's scancel answers so (its words are in the
# unit tests' captures); this shows the journey once (docs/testing.md):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
run cancel 987654
expect_code 1
expect_err "job 987654: neither squeue nor sacct knows this job; nothing was cancelled"
