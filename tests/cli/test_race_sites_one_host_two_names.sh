#!/usr/bin/env bash
# One login host under two names in a spec (`on: h1` beside `{on: u@h1}`:
# an alias and user@host reach one folder there) is two sites of the race
# whose runs share that folder: each call names its site (race-gate
# --site), so each site's run is asked apart. The coordinator grants the job
# that reached its gate first and stands the other site down; nobody is
# left waiting, and the other submission is polled and stood down too.
# (Fake login hosts: tests/cli/sites_lib.sh maps h1, u@h1 and H1 to one.)
# shellcheck source=tests/cli/sites_lib.sh
. "$(dirname "$0")/sites_lib.sh"
cat >job.yaml <<'YAML'
name: job
cluster: local
on: h1
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
alternatives:
  - {on: u@h1, nodes: 2, label: two}
YAML
run submit job.yaml --no-snapshot --no-preflight --gate-timeout 600
expect_code 0
race=$(race_of)
[ -n "$race" ] || fail "submit named no race: $(cat "$T/out" "$T/err")"
stop_coordinator
runs=$(find "$T/hosts/h1/home/proj/runs" -mindepth 1 -maxdepth 1 -type d -name 'job-2*' | sort)
[ "$(wc -l <<<"$runs")" -eq 2 ] || fail "two runs in the one folder at h1, one per site, expected: $runs"$'\n'"$(cat "$T/out" "$T/err")"
# Which run is which site's (its gate's site.json says).
for r in $runs; do
  if grep -q '"site": "u@h1"' "$r/race/gate/site.json"; then run_u=$r; else run_h=$r; fi
done
if [ -z "${run_u:-}" ] || [ -z "${run_h:-}" ]; then
  fail "the gates do not name their sites: $(cat "$T"/hosts/h1/home/proj/runs/*/race/gate/site.json)"
fi
job_u=$(cat "$run_u/race/jobs/two") job_h=$(cat "$run_h/race/jobs/1x1")
# The u@h1 site's job reaches its gate first: granted there, and h1 stands down.
at_gate h1 "$job_u" "$run_u"
coordinate_for 3
grep -q "granted job $job_u at site u_h1" "$T/coord.log" || fail "u@h1's job was not granted: $(cat "$T/coord.log")"
[ "$(cut -d' ' -f1 "$run_u/race/gate/grant")" = "$job_u" ] || fail "u@h1's gate holds no grant for $job_u"
[ ! -e "$run_h/race/gate/grant" ] || fail "h1's run was granted too: $(cat "$run_h/race/gate/grant")"
[ -f "$run_h/race/gate/stand-down" ] || fail "h1's run was not stood down: $(cat "$T/coord.log")"
grep -q "CANCELLED" "$T/hosts/h1/slurm/jobs" || fail "h1's job $job_h was not cancelled: $(cat "$T/hosts/h1/slurm/calls")"
# Every call named its site.
if grep 'race-gate' "$T/ssh.log" | grep -vq -- "--site="; then fail "a race-gate call named no site: $(grep race-gate "$T/ssh.log")"; fi
run status "$race"
expect_code 0
expect_out "won by job $job_u at site u_h1"
expect_out_re "u_h1 +$job_u +two +RUNNING"
expect_out_re "h1 +$job_h +1x1 +CANCELLED +stood down: site u_h1 won \\(job $job_u\\)"
echo ok
