#!/usr/bin/env bash
# A grid's exclude:, include: and max_parallel: live under grid: (docs/sweeps.md):
# at the top of a spec, where they were before, each is refused at its line
# with where it goes; exclude: at the top is the nodes' exclusion, for every
# cell; and a grid's exclude: under grid: drops cells.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cat >old.yaml <<YAML
name: old
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
grid:
  env.A: ["1", "2"]
exclude:
  - {env.A: "1"}
include:
  - {env.A: "3"}
max_parallel: 2
YAML
run gen old.yaml --stdout
expect_code 1
expect_err "ddpctl: error: old.yaml:10:3: exclude: expected a Slurm host list (the nodes the job must not run on, e.g. exclude: g1,g[2-4]), got a list; a grid's cells to drop are \`exclude:\` under \`grid:\` now"
expect_err "ddpctl: error: old.yaml:12:3: include: a grid's \`include:\` goes under \`grid:\` now"
expect_err "ddpctl: error: old.yaml:13:15: max_parallel: goes under \`grid:\` now (grid: {max_parallel: N})"
run sweep old.yaml --dry-run --no-preflight
expect_code 1
expect_err "include: a grid's \`include:\` goes under \`grid:\` now"
cat >new.yaml <<YAML
name: new
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
exclude: g1
grid:
  env.A: ["1", "2"]
  exclude:
    - {env.A: "1"}
  include:
    - {env.A: "3"}
  max_parallel: 2
YAML
run sweep new.yaml --dry-run --no-preflight
expect_code 0
expect_out "2 cell(s); nothing was submitted"
expect_out "would submit shape 1x1: 2 cell(s) as one job array, --array=0-1%2"
run gen new.yaml -o scripts
expect_code 0
grep -q '^#SBATCH --exclude=g1$' scripts/new-1x1.array.sbatch || fail "the array has no --exclude=g1: $(grep SBATCH scripts/new-1x1.array.sbatch)"
grep -q '^export DDPCTL_CELL=A=3$' scripts/cells/1.sh || fail "cell 1 is not A=3"
# Without a grid, max_parallel: would throttle nothing: refused, not ignored.
{ sed '/^grid:/,$d' new.yaml; echo 'max_parallel: 2'; } >plain.yaml
run gen plain.yaml --stdout
expect_code 1
expect_err "ddpctl: error: plain.yaml:8:15: max_parallel: goes under \`grid:\` now"
echo ok
