#!/usr/bin/env bash
# tests/layers/check itself: it fails, naming the file, on an upward include,
# on a unit the layers do not place and on a placed unit without a file, and
# passes a tree that keeps to its layers.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

tree() {  # tree NAME: a source root with two layers, low (a) below high (b)
  mkdir -p "$work/$1/src/cli" "$work/$1/docs"
  # shellcheck disable=SC2016  # backquotes of the markdown fence, not an expansion
  printf '# x\n\n```layers\nlow: a\nhigh: b cli\n```\n' >"$work/$1/docs/architecture.md"
  printf '#pragma once\n' >"$work/$1/src/a.hpp"
  printf '#pragma once\n#include "a.hpp"\n' >"$work/$1/src/b.hpp"
  printf '#include "b.hpp"\n#include "common.hpp"\n' >"$work/$1/src/cli/main.cpp"
  printf '#pragma once\n' >"$work/$1/src/cli/common.hpp"
}

tree good
out=$("$check" "$work/good" 2>&1) || fail "a tree that keeps to its layers failed: $out"
grep -q 'no upward include' <<<"$out" || fail "no verdict printed: $out"

tree up
printf '#pragma once\n#include "b.hpp"\n' >"$work/up/src/a.hpp"
if out=$("$check" "$work/up" 2>&1); then fail "an upward include passed: $out"; fi
grep -q 'src/a.hpp (a, layer low) includes "b.hpp" (b, layer high): an upward include' <<<"$out" ||
  fail "the upward include is not named: $out"

tree unplaced
printf '#pragma once\n' >"$work/unplaced/src/c.hpp"
if out=$("$check" "$work/unplaced" 2>&1); then fail "an unplaced unit passed: $out"; fi
grep -q "src/c.hpp: unit 'c' has no layer" <<<"$out" || fail "the unplaced unit is not named: $out"

tree stale
sed -i 's/^low: a$/low: a gone/' "$work/stale/docs/architecture.md"
if out=$("$check" "$work/stale" 2>&1); then fail "a placed unit without a file passed: $out"; fi
grep -q "places 'gone', which has no file in src/" <<<"$out" || fail "the stale unit is not named: $out"
tree trainer
printf '#include "../trainer/train.hpp"\n' >>"$work/trainer/src/b.hpp"
if out=$("$check" "$work/trainer" 2>&1); then fail "an include of the trainer's code passed: $out"; fi
grep -q "src/b.hpp includes \"../trainer/train.hpp\", whose unit 'trainer train.hpp' has no layer" <<<"$out" ||
  fail "the trainer include is not named: $out"

# A file of src/cli/ including a core header is checked like any other.
tree cli
printf '#pragma once\n#include "cli/common.hpp"\n' >"$work/cli/src/a.hpp"
if out=$("$check" "$work/cli" 2>&1); then fail "a core header including src/cli/ passed: $out"; fi
grep -q 'src/a.hpp (a, layer low) includes "cli/common.hpp" (cli, layer high): an upward include' <<<"$out" ||
  fail "the include of src/cli/ is not named: $out"
echo ok
