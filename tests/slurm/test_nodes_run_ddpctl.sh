#!/usr/bin/env bash
# Every cluster's nodes run this ddpctl (jobs run it for a race's claim and
# re-race): also the 24.11 and 26.05 nodes, whose newer Debian lacks the
# build machine's libraries, since ddpctl needs only the C library.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
out=$(on_login srun -p cpu -N 2 -n 2 -t 1 -J "$JOB_NAME" "$DDPCTL" --version 2>&1) ||
  fail "a node of Slurm $SLURM_VERSION could not run $DDPCTL: $out"
[ "$(grep -c '^ddpctl ' <<<"$out")" -eq 2 ] || fail "expected two nodes to print ddpctl's version: $out"
