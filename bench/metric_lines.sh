#!/usr/bin/env bash
# metric: patterns over rank-0 log lines (issue 49): read_metric_values,
# which finds a line's last match in one pass, against the search after
# each match that it did before (bench/metric_lines.cpp keeps that code),
# both in this one run on this machine. The issue's case: one line of N
# digits and `(?P<v>\d)(?:.*z)?`, a match at every character whose optional
# tail would reach the end of the line, so each search scans the rest of the
# line: N searches of N characters. The baseline runs up to MAX_BASELINE
# characters (default 80,000); above, it would take minutes to hours.
# Then two ordinary 4 MiB logs, to show what one pass costs where nothing is
# pathological. Needs a build (scripts/build, or cmake --build build).
#   bench/metric_lines.sh            # prints the table for bench/RESULTS.md
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
core=$(find "$build" -name libddpctl_core.a -print -quit)
[ -n "$core" ] || { echo "bench: no libddpctl_core.a under $build (build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/ddpctl-bench-metric.XXXXXX)
trap 'rm -rf "$work"' EXIT
c++ -std=c++17 -O2 -I"$root/src" -I"$build/src" "$root/bench/metric_lines.cpp" "$core" -lre2 -lfmt -pthread \
  -o "$work/metric_lines"
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(date -u +%Y-%m-%d)"
"$work/metric_lines" "${MAX_BASELINE:-80000}"
