#!/usr/bin/env bash
# --templates DIR overrides any one part of the job script's template: the
# part in DIR is used, where the bundled one was, and the rest stays bundled.
# A misspelled part, an include of an unknown part and a missing DIR are
# errors, never a part silently left out (docs/templates.md).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
unset DDPCTL_TEMPLATES
bundled=$DDPCTL_SOURCE/templates
configs=$DDPCTL_SOURCE/configs

# For each part: a spec whose script has that part's text in it, and the text.
# gen renders no race claim (only submit/race race a group) and no snapshot
# (only submit takes one): for those the marker shows that the part in DIR is
# the one used, and tests/unit/script/test_templates.cpp renders them.
declare -A spec_of=(
  [race.sh]=local-cpu.yaml
  [environment.sh]=raven-per-gpu.yaml
  [rendezvous.sh]=local-cpu.yaml
  [requeue.sh]=local-gpu-2x4.yaml
  [agent.sh]=local-gpu-2x4.yaml
  [snapshot.sh]=local-cpu.yaml
  [container.sh]=containers/local-apptainer.yaml
  [launch.sh]=local-cpu.yaml
)
declare -A probe_of=(
  [environment.sh]='# ---- begin user setup'
  [rendezvous.sh]='# Rendezvous:'
  [requeue.sh]='ddpctl_requeue() {'
  [agent.sh]='# While it runs (docs/running.md)'
  [container.sh]='ddpctl_container=('
  [launch.sh]='# Launch:'
)

n=0
for file in "$bundled"/*.mustache; do
  part=$(basename "$file" .mustache)
  [ "$part" != sbatch.sh ] || continue
  spec=${spec_of[$part]:-}
  [ -n "$spec" ] || fail "no spec for the part $part: add it to this test"
  run gen "$configs/$spec" --stdout
  expect_code 0
  cp out plain
  probe=${probe_of[$part]:-}
  [ -z "$probe" ] || expect_out "$probe"

  rm -rf tpl
  mkdir tpl
  marker="# override of $part"
  { echo "$marker"; cat "$file"; } >"tpl/$part.mustache"
  run gen "$configs/$spec" --stdout --templates tpl
  expect_code 0
  [ "$(grep -cxF -- "$marker" out)" = 1 ] || fail "$part: the marker is not in the script exactly once"
  # Where the part was: the part's text follows the marker.
  if [ -n "$probe" ]; then
    awk -v m="$marker" 'seen; $0 == m { seen = 1 }' out >after
    grep -qF -- "$probe" after || fail "$part: '$probe' is not after the marker"
  fi
  # Empty lines around the marker line are squeezed on both sides (the
  # renderer keeps one of a run of empty lines, and the marker splits a run).
  grep -vxF -- "$marker" out | cat -s >mine
  cat -s plain >theirs
  diff -u theirs mine || fail "$part: the script differs beyond the marker"
  # The same through $DDPCTL_TEMPLATES.
  DDPCTL_TEMPLATES=tpl run gen "$configs/$spec" --stdout
  expect_code 0
  [ "$(grep -cxF -- "$marker" out)" = 1 ] || fail "$part: \$DDPCTL_TEMPLATES: the marker is not in the script once"
  n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n parts found in $bundled"

# A misspelled part would be ignored: it is an error naming the file, with
# the names it may have.
rm -rf tpl
mkdir tpl
cp "$bundled/requeue.sh.mustache" tpl/requeu.sh.mustache
run gen "$configs/local-cpu.yaml" --stdout --templates tpl
expect_code 1
expect_err "tpl/requeu.sh.mustache: not a template of ddpctl (did you mean 'requeue.sh.mustache'?), so it would not be used"
expect_err "the templates: sbatch.sh.mustache, race.sh.mustache, environment.sh.mustache, rendezvous.sh.mustache, requeue.sh.mustache, agent.sh.mustache, snapshot.sh.mustache, container.sh.mustache, launch.sh.mustache"
[ ! -s out ] || fail "a script was printed despite the error"

# An include of a part that does not exist: an error naming the file and the part.
rm tpl/requeu.sh.mustache
{ cat "$bundled/launch.sh.mustache"; echo '{{> nope}}'; } >tpl/launch.sh.mustache
run gen "$configs/local-cpu.yaml" --stdout --templates tpl
expect_code 1
expect_err "tpl/launch.sh.mustache: includes an unknown template part 'nope'; the parts: race.sh, environment.sh,"

# A folder that is not there.
run gen "$configs/local-cpu.yaml" --stdout --templates nowhere
expect_code 1
expect_err "ddpctl: error: nowhere: templates folder not found"
DDPCTL_TEMPLATES=nowhere run gen "$configs/local-cpu.yaml" --stdout
expect_code 1
expect_err "nowhere: templates folder not found"
echo ok
