#!/usr/bin/env bash
# `sweep:` is the old spelling of a grid of shapes: a spec that has one is
# still read as before (gen writes one script per shape), and `gen` says once
# what the same shapes are as a grid. The bundled scaling examples are such
# grids: one array per shape, one cell at a time (grid.max_parallel: 1).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cat >old.yaml <<'YAML'
name: old
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [hostname]
sweep:
  - {nodes: 1, procs_per_node: 1}
  - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}
  - nodes: 2
YAML
run gen old.yaml -o scripts
expect_code 0
expect_out "scripts/old-1x1.sbatch"
expect_out "scripts/old-1x2.sbatch"
expect_out "scripts/old-2x1.sbatch"
[ "$(grep -c 'ddpctl: note:' "$T/err")" = 1 ] || fail "expected one note: $(cat "$T/err")"
expect_err "\`sweep:\` is the old spelling of a grid of shapes, still read as before"
expect_err "    grid:"
expect_err "      include:"
expect_err "        - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}"
expect_err "        - {nodes: 2}"
expect_err "      max_parallel: 1"
# The note's grid, in place of sweep:, is a valid spec of the same three shapes.
python3 - "$T/err" <<'PY' >new.yaml || fail "could not build the spec from the note"
import sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.strip() == "grid:")
spec = open("old.yaml").read().split("sweep:")[0]
print(spec + "\n".join(l[4:].split("   #")[0] for l in lines[start:start + 6]))
PY
run gen new.yaml --stdout
expect_code 0
[ "$(grep -c '^# ==> old-[0-9]x[0-9].array.sbatch <==$' "$T/out")" = 3 ] ||
  fail "the note's grid is not three arrays: $(grep '^# ==>' "$T/out")"
[ ! -s "$T/err" ] || fail "gen of a grid printed: $(cat "$T/err")"
# A spec without sweep: gets no note.
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout
expect_code 0
[ ! -s "$T/err" ] || fail "gen of a plain spec printed: $(cat "$T/err")"
# The bundled scaling example: three shapes, three arrays, one after another.
run sweep "$DDPCTL_SOURCE/configs/local-sweep.yaml" --dry-run --no-preflight
expect_code 0
expect_out "3 cell(s); nothing was submitted"
expect_out "would submit shape 1x1: 1 cell(s) as one job array, --array=0%1"
expect_out "would submit shape 1x2: 1 cell(s) as one job array, --array=1%1"
expect_out "would submit shape 2x1: 1 cell(s) as one job array, --array=2%1"
expect_out "one cell at a time (max_parallel: 1): each array after the previous one ends"
run sweep "$DDPCTL_SOURCE/configs/local-sweep.yaml" --dry-run --no-preflight --one-at-a-time
expect_code 1
expect_err "\`max_parallel: 1\` under \`grid:\`: one at a time"
echo ok
