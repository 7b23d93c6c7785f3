#!/usr/bin/env bash
# A race across sites with one site hung (docs/race.md "Across sites"): the
# coordinator's time from its start to the grant of a job waiting at
# another site's gate, with site a's race-gate call never answering (as an
# ssh call to a login host that hangs), against the same race with every
# site answering (the baseline), run in the same run. No cluster: the login
# hosts are tests/cli/sites_lib.sh's fake ones (the real ddpctl behind a
# fake ssh, a fake queue). REPS (default 5) races each; POLL (default 5,
# the coordinator's default) seconds between polls.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
reps=${REPS:-5} poll=${POLL:-5}
# shellcheck source=tests/cli/sites_lib.sh
source "$root/tests/cli/sites_lib.sh"
cat >job.yaml <<'YAML'
name: job
cluster: local
on: a.org
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
alternatives:
  - {on: b.org, nodes: 2, label: b}
  - {on: c.org, nodes: 3, label: c}
YAML
# one_race HUNG: seconds from the coordinator's start to b's job's grant.
one_race() {
  rm -f "$T"/hosts/*/answers.sh
  run submit job.yaml --no-snapshot --no-preflight --gate-timeout 600 --again
  [ "$code" -eq 0 ] || fail "submit: $(cat "$T/out" "$T/err")"
  race=$(race_of)
  stop_coordinator
  local run_b job_b start
  run_b=$(site_run b.org)
  job_b=$(cat "$run_b/race/jobs/b")
  at_gate b.org "$job_b" "$run_b"
  [ "$1" = hung ] && host_answers a.org 'sleep 600'
  start=$(date +%s.%N)
  "$DDPCTL" coordinate "$race" --poll "$poll" --for 300 >"$T/coord.log" 2>&1 &
  local pid=$! deadline=$((SECONDS + 300))
  until [ -f "runs/$race/grant" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no grant within 300 s: $(cat "$T/coord.log" runs/"$race"/site.*.submit.log)"
    sleep 0.05
  done
  awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.2f", a - b }'
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
declare -A took
for kind in all-answer hung; do
  for _ in $(seq "$reps"); do took[$kind]+="$(one_race "$kind") "; done
  echo "$kind: ${took[$kind]}"
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
max() { tr ' ' '\n' | sed '/^$/d' | sort -g | tail -n 1; }
printf '\n| sites | time to the grant: median | max |\n|---|---:|---:|\n'
for kind in all-answer hung; do
  printf '| %s | %.1f s | %.1f s |\n' "$kind" "$(median <<<"${took[$kind]}")" "$(max <<<"${took[$kind]}")"
done
awk -v h="$(median <<<"${took[hung]}")" -v a="$(median <<<"${took[all-answer]}")" \
  'BEGIN { printf "ratio hung / all-answer (medians): %.2f\n", h / a }'
