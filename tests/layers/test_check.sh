#!/usr/bin/env bash
# tests/layers/check itself: it fails, naming the file, on an upward include,
# on an include between two folders of one floor (a line `a b: why`),
# on an include not by folder, on a folder src/LAYERS does not place and on a
# placed folder that does not exist, on a cycle inside a folder and on a
# written-down cycle that is gone, on a unit test that includes a folder above
# its own or stands outside the folders, and passes a tree that keeps to its
# layers.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

tree() {  # tree NAME: a source root with two folders, low below high, and cli
  mkdir -p "$work/$1/src/low" "$work/$1/src/high" "$work/$1/src/cli"
  printf '# x\nlow: the bottom\nhigh: above it\ncli: the top\n' >"$work/$1/src/LAYERS"
  printf '#pragma once\n' >"$work/$1/src/low/a.hpp"
  printf '#pragma once\n#include "low/a.hpp"\n' >"$work/$1/src/high/b.hpp"
  printf '#include "high/b.hpp"\n#include "cli/common.hpp"\n' >"$work/$1/src/cli/main.cpp"
  printf '#pragma once\n' >"$work/$1/src/cli/common.hpp"
}

tree good
out=$("$check" "$work/good" 2>&1) || fail "a tree that keeps to its layers failed: $out"
grep -q 'no upward include' <<<"$out" || fail "no verdict printed: $out"

tree up
printf '#pragma once\n#include "high/b.hpp"\n' >"$work/up/src/low/a.hpp"
if out=$("$check" "$work/up" 2>&1); then fail "an upward include passed: $out"; fi
grep -q 'src/low/a.hpp (low) includes "high/b.hpp" (high, above low in src/LAYERS): an upward include' <<<"$out" ||
  fail "the upward include is not named: $out"

tree siblings
printf '# x\nlow: the bottom\nhigh side: one floor, two folders\ncli: the top\n' >"$work/siblings/src/LAYERS"
mkdir -p "$work/siblings/src/side"
printf '#pragma once\n#include "low/a.hpp"\n' >"$work/siblings/src/side/s.hpp"
out=$("$check" "$work/siblings" 2>&1) || fail "two folders of one floor, each including the floor below, failed: $out"
grep -q '(4 folders on 3 floors' <<<"$out" || fail "the floors are not counted: $out"
printf '#include "side/s.hpp"\n' >>"$work/siblings/src/high/b.hpp"
if out=$("$check" "$work/siblings" 2>&1); then fail "an include between folders of one floor passed: $out"; fi
grep -q 'src/high/b.hpp (high) includes "side/s.hpp" (side, on high'"'"'s floor in src/LAYERS): folders of one floor include none of each other' <<<"$out" ||
  fail "the include between siblings is not named: $out"
mkdir -p "$work/siblings/tests/unit/high"
sed -i '$d' "$work/siblings/src/high/b.hpp"
printf '#include "side/s.hpp"\n' >"$work/siblings/tests/unit/high/test_b.cpp"
if out=$("$check" "$work/siblings" 2>&1); then fail "a unit test including a sibling folder passed: $out"; fi
grep -q 'tests/unit/high/test_b.cpp (high) includes "side/s.hpp" (side, on high'"'"'s floor in src/LAYERS)' <<<"$out" ||
  fail "the unit test's include of a sibling is not named: $out"

tree bare
printf '#include "a.hpp"\n' >>"$work/bare/src/high/b.hpp"
if out=$("$check" "$work/bare" 2>&1); then fail "an include without its folder passed: $out"; fi
grep -q 'src/high/b.hpp includes "a.hpp": name a header of src/ by its folder' <<<"$out" ||
  fail "the include without its folder is not named: $out"

tree unplaced
mkdir -p "$work/unplaced/src/extra"
printf '#pragma once\n' >"$work/unplaced/src/extra/c.hpp"
if out=$("$check" "$work/unplaced" 2>&1); then fail "an unplaced folder passed: $out"; fi
grep -q "src/extra/ has no place in src/LAYERS" <<<"$out" || fail "the unplaced folder is not named: $out"

tree loose
printf '#pragma once\n' >"$work/loose/src/c.hpp"
if out=$("$check" "$work/loose" 2>&1); then fail "a file in no folder passed: $out"; fi
grep -q "src/c.hpp is in no folder of src/" <<<"$out" || fail "the file in no folder is not named: $out"

tree stale
printf 'gone: no folder\n' >>"$work/stale/src/LAYERS"
if out=$("$check" "$work/stale" 2>&1); then fail "a placed folder that does not exist passed: $out"; fi
grep -q "places 'gone', which is no folder of src/" <<<"$out" || fail "the stale folder is not named: $out"

tree trainer
printf '#include "../../trainer/train.hpp"\n' >>"$work/trainer/src/high/b.hpp"
if out=$("$check" "$work/trainer" 2>&1); then fail "an include of the trainer's code passed: $out"; fi
grep -q 'src/high/b.hpp includes "../../trainer/train.hpp": of the trainer only its file formats' <<<"$out" ||
  fail "the trainer include is not named: $out"

# A file of src/cli/ included from below is an upward include like any other.
tree cli
printf '#pragma once\n#include "cli/common.hpp"\n' >"$work/cli/src/low/a.hpp"
if out=$("$check" "$work/cli" 2>&1); then fail "a core header including src/cli/ passed: $out"; fi
grep -q 'src/low/a.hpp (low) includes "cli/common.hpp" (cli, above low in src/LAYERS): an upward include' <<<"$out" ||
  fail "the include of src/cli/ is not named: $out"

# Units of one folder including each other, around a loop of three.
tree cycle
printf '#pragma once\n#include "high/c.hpp"\n' >>"$work/cycle/src/high/b.hpp"
printf '#pragma once\n#include "high/d.hpp"\n' >"$work/cycle/src/high/c.hpp"
printf '#include "high/d.hpp"\n#include "high/b.hpp"\n' >"$work/cycle/src/high/d.cpp"
printf '#pragma once\n' >"$work/cycle/src/high/d.hpp"
if out=$("$check" "$work/cycle" 2>&1); then fail "a cycle inside a folder passed: $out"; fi
grep -q 'src/high/: the units b -> c -> d -> b include each other (a cycle)' <<<"$out" ||
  fail "the cycle is not named: $out"
# Written down, it passes; once broken, its line must go.
printf 'cycle: high/b high/c high/d: why\n' >>"$work/cycle/src/LAYERS"
out=$("$check" "$work/cycle" 2>&1) || fail "a written-down cycle failed: $out"
printf '#include "high/d.hpp"\n' >"$work/cycle/src/high/d.cpp"
if out=$("$check" "$work/cycle" 2>&1); then fail "a written-down cycle that is gone passed: $out"; fi
grep -q 'src/LAYERS:5 names a cycle that is gone' <<<"$out" || fail "the gone cycle is not named: $out"
# The unit tests mirror the folders: a test of high/ may use low/ and the
# helpers beside the folders, a test of low/ may not use high/.
tree tests
mkdir -p "$work/tests/tests/unit/low" "$work/tests/tests/unit/high"
printf '#include "low/a.hpp"\n#include "high/b.hpp"\n#include "helpers.hpp"\n' >"$work/tests/tests/unit/high/test_b.cpp"
printf '#include "low/a.hpp"\n' >"$work/tests/tests/unit/low/test_a.cpp"
printf '#pragma once\n#include "high/b.hpp"\n' >"$work/tests/tests/unit/helpers.hpp"
out=$("$check" "$work/tests" 2>&1) || fail "unit tests that keep to their folders failed: $out"
grep -q '2 unit test files' <<<"$out" || fail "the unit tests are not counted: $out"
printf '#include "high/b.hpp"\n' >>"$work/tests/tests/unit/low/test_a.cpp"
if out=$("$check" "$work/tests" 2>&1); then fail "a test of low/ including high/ passed: $out"; fi
grep -q 'tests/unit/low/test_a.cpp (low) includes "high/b.hpp" (high, above low in src/LAYERS)' <<<"$out" ||
  fail "the upward include of a test is not named: $out"

tree loose_test
mkdir -p "$work/loose_test/tests/unit"
printf '#include "low/a.hpp"\n' >"$work/loose_test/tests/unit/test_a.cpp"
if out=$("$check" "$work/loose_test" 2>&1); then fail "a test in no folder passed: $out"; fi
grep -q 'tests/unit/test_a.cpp is in no folder' <<<"$out" || fail "the test in no folder is not named: $out"

tree odd_test
mkdir -p "$work/odd_test/tests/unit/extra"
printf '#include "low/a.hpp"\n' >"$work/odd_test/tests/unit/extra/test_a.cpp"
if out=$("$check" "$work/odd_test" 2>&1); then fail "a test in a folder src/ does not have passed: $out"; fi
grep -q 'tests/unit/extra/ is no folder of src/LAYERS' <<<"$out" || fail "the test's unknown folder is not named: $out"
echo ok
