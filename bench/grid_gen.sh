#!/usr/bin/env bash
# Big grids (issue 49, item 8): the time `ddpctl gen` and `ddpctl sweep` take
# for a grid of N cells must grow linearly with N, and an `include:` list of
# N cells must cost what a grid of N cells does (it grew quadratically: each
# cell read the whole spec again, include list and all).
#
# Specs: one CPU node per cell, a shell command using the cell's values
# (`echo {A} {B}`), the grid `env.A` (N/100 values) x `env.B` (100 values):
# over 1,000 cells one script and a table (docs/sweeps.md "Big grids");
# the same cells with the values in a list command's words (`[echo, '{A}',
# '{B}']`), which must stay a script per cell; and `grid: {include: [...]}`
# of INCLUDE cells, one `{env.A: "i"}` each.
# Measured, each once, in this run (wall time of the whole command, and its
# peak memory from /usr/bin/time):
#   gen      `ddpctl gen SPEC -o DIR`: every cell read, checked, rendered and
#            written (cells/<index>.sh, about 11 KiB each; over 1,000 cells
#            of env: values, cells/cell.sh and a line each in cells/cell.env)
#   dry-run  `ddpctl sweep SPEC --dry-run --no-preflight`: every cell read
#            and checked, nothing written
#   sweep    `ddpctl sweep SPEC --no-preflight --no-snapshot` against stub
#            Slurm commands first on PATH (sbatch answers a job id; nothing
#            else answers): the run folder, every cell's script and folder,
#            the ledger, one sbatch
# Ratios: a size's time per cell against the smallest size's (1: linear);
# the include list's time against the grid of as many cells. With
# BASELINE=/path/to/an/older/ddpctl, its gen of the sizes up to
# BASELINE_MAX (default 10000) and of the include list are timed in the
# same run, and this / baseline is printed.
#
# Usage: bench/grid_gen.sh [PATH/TO/ddpctl]   (default: build/src/ddpctl)
#   SIZES="1000 10000 100000" INCLUDE=4000 BASELINE= BASELINE_MAX=10000
# Writes under a temporary folder (about 1.2 GiB at 100,000 cells), removed
# at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ddpctl=$(realpath "${1:-$root/build/src/ddpctl}")
sizes=${SIZES:-1000 10000 100000}
include=${INCLUDE:-4000}
baseline=${BASELINE:-}
baseline_max=${BASELINE_MAX:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/ddpctl-grid-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

mkdir bin
printf '#!/bin/sh\necho 4242\n' >bin/sbatch
for c in squeue sacct scontrol sinfo sacctmgr scancel; do printf '#!/bin/sh\nexit 1\n' >"bin/$c"; done
chmod +x bin/*

spec_head() {
  printf 'name: %s\ncluster: %s\npartition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\n' \
    "$1" "$root/configs/clusters/local.yaml"
  printf 'time: "00:10:00"\noutput_dir: logs\n'
}
for n in $sizes; do
  { spec_head "g$n"
    echo "command: 'echo {A} {B}'"
    python3 -c "import sys; n = int(sys.argv[1]); a = max(1, n // 100); b = n // a
print('grid:\n  env.A: [' + ', '.join('\"%d\"' % i for i in range(a)) + ']')
print('  env.B: [' + ', '.join('\"%d\"' % i for i in range(b)) + ']')" "$n"
  } >"g$n.yaml"
  # The same cells with the values in a list command's words: a script per cell.
  sed -e "s/^name: g$n/name: p$n/" -e "s/^command: .*/command: [echo, '{A}', '{B}']/" "g$n.yaml" >"p$n.yaml"
done
{ spec_head "inc$include"
  echo "command: 'echo {A}'"
  python3 -c "import sys; print('grid:\n  include:'); [print('    - {env.A: \"%d\"}' % i) for i in range(int(sys.argv[1]))]" "$include"
} >"inc$include.yaml"
# The same list at the top of the spec: an older ddpctl's spelling (BASELINE).
sed -e 's/^grid:$//' -e 's/^  include:$/include:/' -e 's/^    - /  - /' "inc$include.yaml" >"inc$include.old.yaml"
{ spec_head "grid$include"
  echo "command: 'echo {A}'"
  python3 -c "import sys; print('grid:\n  env.A: [' + ', '.join('\"%d\"' % i for i in range(int(sys.argv[1]))) + ']')" "$include"
} >"grid$include.yaml"

# time_of NAME CMD...: runs CMD (its output discarded) and prints "seconds KiB".
time_of() {
  local name=$1
  shift
  rm -rf out runs logs
  /usr/bin/time -f '%e %M' -o "$name.time" "$@" >/dev/null 2>"$name.err" ||
    { echo "bench: $name failed: $(tail -3 "$name.err")" >&2; exit 1; }
  cat "$name.time"
}
per_cell() { python3 -c "import sys; print('%.3f' % (1000 * float(sys.argv[1]) / int(sys.argv[2])))" "$1" "$2"; }
ratio() { python3 -c "import sys; print('%.2fx' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p;T;q' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r), load $(cut -d' ' -f1 /proc/loadavg), $(date -u +%F)"
echo
echo "| cells | gen: s | ms/cell | vs smallest | peak MiB | dry-run: s | sweep: s | ms/cell | vs smallest | gen, a script per cell: s | ms/cell |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
first_gen='' first_sweep=''
for n in $sizes; do
  read -r gen_s gen_kb < <(time_of "gen$n" "$ddpctl" gen "g$n.yaml" -o out)
  read -r dry_s _ < <(time_of "dry$n" "$ddpctl" sweep "g$n.yaml" --dry-run --no-preflight)
  read -r sweep_s _ < <(time_of "sweep$n" env PATH="$work/bin:$PATH" "$ddpctl" sweep "g$n.yaml" --no-preflight \
    --no-snapshot --runs runs)
  g=$(per_cell "$gen_s" "$n") s=$(per_cell "$sweep_s" "$n")
  first_gen=${first_gen:-$g} first_sweep=${first_sweep:-$s}
  read -r own_s _ < <(time_of "own$n" "$ddpctl" gen "p$n.yaml" -o out)
  echo "| $n | $gen_s | $g | $(ratio "$g" "$first_gen") | $((gen_kb / 1024)) | $dry_s | $sweep_s | $s | $(ratio "$s" "$first_sweep") | $own_s | $(per_cell "$own_s" "$n") |"
done
read -r inc_s _ < <(time_of inc "$ddpctl" gen "inc$include.yaml" -o out)
read -r grid_s _ < <(time_of grid "$ddpctl" gen "grid$include.yaml" -o out)
echo
echo "| $include cells | gen: s | include / grid |"
echo "|---|---:|---:|"
echo "| \`grid: {env.A: [$include values]}\` | $grid_s | 1 |"
echo "| \`grid: {include: [$include entries]}\` | $inc_s | $(ratio "$inc_s" "$grid_s") |"
if [ -n "$baseline" ]; then
  echo
  echo "| gen, against $(basename "$baseline") ($baseline) | this: s | baseline: s | this / baseline |"
  echo "|---|---:|---:|---:|"
  for n in $sizes; do
    [ "$n" -le "$baseline_max" ] || continue
    read -r this_s _ < <(time_of "t$n" "$ddpctl" gen "g$n.yaml" -o out)
    read -r base_s _ < <(time_of "b$n" "$baseline" gen "g$n.yaml" -o out)
    echo "| $n cells | $this_s | $base_s | $(ratio "$this_s" "$base_s") |"
  done
  read -r this_s _ < <(time_of tinc "$ddpctl" gen "inc$include.yaml" -o out)
  # A baseline from before the include list moved under grid: takes the old spelling.
  base_inc=inc$include.yaml
  "$baseline" gen "$base_inc" -o out >/dev/null 2>&1 || base_inc=inc$include.old.yaml
  read -r base_s _ < <(time_of binc "$baseline" gen "$base_inc" -o out)
  echo "| include: of $include | $this_s | $base_s | $(ratio "$this_s" "$base_s") |"
fi
