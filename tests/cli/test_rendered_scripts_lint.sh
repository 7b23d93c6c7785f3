#!/usr/bin/env bash
# Every example renders to a script that bash parses and shellcheck accepts.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
command -v shellcheck >/dev/null || fail "shellcheck is not installed (scripts/setup installs it)"
n=0
while IFS= read -r spec; do
  "$DDPCTL" gen "$spec" -o "$T/s" >/dev/null || fail "gen failed for $spec"
done < <(find "$DDPCTL_SOURCE/configs" -name '*.yaml' -not -path '*/clusters/*')
for f in "$T"/s/*.sbatch; do
  bash -n "$f" || fail "bash -n: $f"
  # SC1091: a setup line sources a file that exists only on the cluster.
  shellcheck --shell=bash --severity=style --exclude=SC1091 "$f" || fail "shellcheck: $f"
  n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n scripts rendered"
echo "ok: $n scripts"
