#!/usr/bin/env bash
# What a grid gets wrong is said at its line in the spec, and what a cell's
# program could not get exactly is refused before anything is written:
# a field the grid sets that is no field, a variable a cell cannot set, an
# empty grid or include entry, two keys of one DDPCTL_GRID_ variable, a cell
# name too long for Linux to pass. Placeholders of keys with - or [n] are
# read, and {cell} stays the cell's name beside a key named cell.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
spec() {  # spec FILE: the base spec, then stdin
  { printf 'name: g\ncluster: %s\npartition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\n' \
      "$DDPCTL_SOURCE/configs/clusters/local.yaml"; cat; } >"$1"
}
spec a.yaml <<'YAML'
trainer: {model: smallcnn, data: synthetic, epochs: 1}
grid:
  trainer_lr: [0.1, 0.2]
YAML
run gen a.yaml --stdout
expect_code 1
expect_err "ddpctl: error: a.yaml:8:16: unknown field 'trainer_lr' (did you mean 'trainer'?)"
spec b.yaml <<'YAML'
command: 'true'
grid:
  env.DDPCTL_CELL: [a]
YAML
run gen b.yaml --stdout
expect_code 1
expect_err "ddpctl: error: b.yaml:8:21: env: DDPCTL_CELL is reserved for ddpctl"
spec c.yaml <<'YAML'
command: 'true'
grid: {}
YAML
run gen c.yaml --stdout
expect_code 1
expect_err "ddpctl: error: c.yaml:7:7: grid: expected a mapping of field paths to lists of values (e.g. \`trainer.lr: [0.1, 0.01]\`), got an empty mapping ({})"
spec d.yaml <<'YAML'
command: 'true'
grid:
  include: [{nodes: 1}, {}]
YAML
run gen d.yaml --stdout
expect_code 1
expect_err "ddpctl: error: d.yaml:8:25: grid.include[1]: expected a mapping of field paths to values (a partial cell: \`{trainer.lr: 0.1}\`), got an empty mapping ({})"
spec e.yaml <<'YAML'
command: 'true'
grid:
  env.LR: ["0.1"]
  env.lr: ["0.2"]
YAML
run gen e.yaml --stdout
expect_code 1
expect_err "ddpctl: error: e.yaml:9:3: grid.env.lr: its variable DDPCTL_GRID_LR would also be env.LR's"
python3 -c 'print("grid:\n  env.A: [" + "a" * 70000 + "]\n  env.B: [" + "b" * 70000 + "]")' | spec f.yaml
echo "command: 'true'" >>f.yaml
run gen f.yaml -o f.out
expect_code 1
expect_err "ddpctl: error: f.yaml:7:3: grid: 1 cell(s) have a name too long to pass (cell 0,"
expect_err "DDPCTL_CELL=<name> is 140017 bytes); Linux passes at most 128 KiB (131071 bytes) in one environment variable"
[ ! -e f.out ] || fail "gen wrote scripts for a cell that could not start"
spec g.yaml <<'YAML'
trainer:
  model: smallcnn
  data: synthetic
  epochs: 1
  extra_args: [--tag, old, 'dep={kill-on-invalid-dep}', 'second={trainer.extra_args[1]}', 'c={cell}', 'e={env.cell}']
grid:
  sbatch.kill-on-invalid-dep: ["yes"]
  trainer.extra_args[1]: [x]
  env.cell: [y]
YAML
run gen g.yaml -o g.out
expect_code 0
grep -qF -- "--tag x dep=yes second=x 'c=kill-on-invalid-dep=yes,trainer.extra_args[1]=x,env.cell=y' e=y" g.out/cells/0.sh ||
  fail "placeholders not replaced: $(grep -F -- '--tag' g.out/cells/0.sh | tail -1)"
echo ok
