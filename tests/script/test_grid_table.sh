#!/usr/bin/env bash
# A big grid of env: values (docs/sweeps.md "Big grids") is one script of
# every cell and a table of the cells' variables. Run as its array task, a
# cell must get exactly the variables its own script (a script per cell,
# here forced by a --templates part that writes env: itself) gives it,
# whatever its values hold; a task with no line in the table fails saying so.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The training step's srun records the variables the cell's program would get.
answer_srun() {
  if [[ " $* " == *" ip -4 -o addr "* ]]; then exec ip "$@"; fi
  if [[ " $* " == *" bash -c "* ]]; then
    env | grep -E '^(A|B|OUT|C|DDPCTL_CELL|DDPCTL_GRID_[A-Z]+|DDPCTL_CELL_DIR|DDPCTL_CHECKPOINT_DIR)=' | sort >"${STUB_LOG%/*}/seen"
  fi
}
export -f answer_srun

{
  cat <<'EOF_SPEC'
name: big
cluster: local
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
time: "00:10:00"
output_dir: logs
command: 'echo {A} "$B" {cell}'
env: {OUT: 'out/{A}/{cell}', C: '$A-c'}
grid:
  env.A: ["it's", "a b", "$(touch pwned)", "%d %s", "\\", "", "{B}", "\u00fcn", "`id`", 'x"y', "$HOME"]
EOF_SPEC
  printf '  env.B: [%s]\n' "$(seq -s, 0 90)"
} | spec big

# The same grid, a script per cell: a part that writes env: itself.
mkdir -p "$T/parts"
printf '{{#env}}\nexport {{{name}}}={{{assigned}}}\n{{/env}}\n' >"$T/parts/environment.sh.mustache"
render big.yaml --templates "$T/parts"
[ -f "$T/gen/cells/1000.sh" ] || fail "--templates with its own env: did not give a script per cell"
[ ! -e "$T/gen/cells/cell.env" ] || fail "--templates with its own env: still wrote the table"
mv "$T/gen" "$T/own"

# The table: three files, not 1001 scripts.
render big.yaml
[ -f "$T/gen/cells/cell.sh" ] || fail "no cells/cell.sh: $(find "$T/gen" -maxdepth 1)"
[ "$(wc -l <"$T/gen/cells/cell.env")" -eq 1001 ] || fail "cells/cell.env is not a line per cell"
[ ! -e "$T/gen/cells/0.sh" ] || fail "a big grid of env: values wrote a script per cell"
array_script=$script

# shellcheck disable=SC2034  # run_job's: the spec's one node
nodes=1
# Cells 0 (A: it's), 182 (A: $(touch pwned)), 546 (A: {B}) and 1000 (A: $HOME, B: 90).
for cell in 0 182 546 1000; do
  rm -f "$T/seen"
  run_job "$array_script" SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$cell
  expect_rc 0
  [ -s "$T/seen" ] || fail_job "cell $cell: the training step did not run"
  mv "$T/seen" "$T/seen.$cell"
  run_job "$T/own/cells/$cell.sh" SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$cell
  expect_rc 0
  [ -s "$T/seen" ] || fail_job "cell $cell's own script: the training step did not run"
  diff "$T/seen" "$T/seen.$cell" >"$T/diff" ||
    fail "cell $cell: the table gives other variables than the cell's own script:"$'\n'"$(cat "$T/diff")"
done
for line in "A=it's" "DDPCTL_GRID_B=0" "OUT=out/it's/A=it's,B=0"; do
  grep -qxF "$line" "$T/seen.0" || fail "cell 0's program lacks $line: $(cat "$T/seen.0")"
done
# shellcheck disable=SC2016  # the value, as written
grep -qxF 'DDPCTL_GRID_A=$(touch pwned)' "$T/seen.182" || fail "cell 182's value changed: $(cat "$T/seen.182")"
grep -qxF 'A={B}' "$T/seen.546" || fail "cell 546's value {B} was not kept as written: $(cat "$T/seen.546")"
[ ! -e "$T/job/pwned" ] || fail "a value was run as a command"

# A task beyond the table.
run_job "$array_script" SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=1001
expect_rc 1
expect_job_err "has no line for cell 1001"
echo ok
