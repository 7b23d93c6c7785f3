#!/usr/bin/env bash
# A site is data, never authority (docs/race.md "What a site may say"):
# login hosts here are fake (tests/cli/sites_lib.sh: the real ddpctl in a
# world of its own behind a fake ssh, with a fake queue). Site b's job wins
# the race; then b answers that its run is the race's own id (or another
# run here). The coordinator takes b as not reached, the race's record here
# stays whole, and `fetch RACE` takes only the run the race recorded for b,
# into the race's own folder: no run here is replaced.
# shellcheck source=tests/cli/sites_lib.sh
. "$(dirname "$0")/sites_lib.sh"
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
YAML
run submit job.yaml --no-snapshot --no-preflight --gate-timeout 600
expect_code 0
race=$(race_of)
[ -n "$race" ] || fail "submit named no race: $(cat "$T/out" "$T/err")"
stop_coordinator  # the test runs its own, in front
run_b=$(site_run b.org)
[ -n "$run_b" ] || fail "no run at b.org: $(cat "$T/out" "$T/err")"
job_b=$(cat "$run_b"/race/jobs/b)
at_gate b.org "$job_b"
coordinate_for 3
grep -q "granted job $job_b at site b.org" "$T/coord.log" || fail "b's job was not granted: $(cat "$T/coord.log")"
[ "$(cat "runs/$race/site.b.org.run")" = "$(basename "$run_b")" ] || fail "b's run was not recorded: $(ls "runs/$race")"

# A local run of the user's own, which a hostile answer might name.
mkdir -p runs/mine-20261201T000000Z-aaaaaa && echo mine >runs/mine-20261201T000000Z-aaaaaa/run.json
for hostile in "$race" mine-20261201T000000Z-aaaaaa; do
  host_answers b.org "echo '{\"coordinator\":\"$race\",\"site\":\"b.org\",\"run\":\"$hostile\",\"jobs\":[]}'"
  coordinate_for 1
  grep -q "site b.org: not reached: its answer names run '$hostile', but this race's run there is $(basename "$run_b")" \
    "$T/coord.log" || fail "the coordinator took b's word: $(cat "$T/coord.log")"
  run fetch "$race"
  expect_code 1
  expect_err "which did not say its run there: its answer names run '$hostile'"
  if [ ! -f "runs/$race/sites.json" ] || [ ! -f "runs/$race/grant" ]; then
    fail "the race's record here is gone: $(ls -la "runs/$race" 2>&1)"
  fi
  [ "$(cat runs/mine-20261201T000000Z-aaaaaa/run.json)" = mine ] || fail "fetch replaced the user's run"
  run status "$race"
  expect_code 0
  expect_out "won by job $job_b at site b.org"
done

# An honest answer again: fetch takes b's run, under the race only.
rm "$T/hosts/b.org/answers.sh"
run fetch "$race"
expect_code 0
expect_out "race $race: won by job $job_b at site b.org; its run there is $(basename "$run_b")"
[ -f "runs/$race/fetched/$(basename "$run_b")/run.json" ] || fail "fetch did not bring b's run under the race: $(cat "$T/out")"
[ ! -e "runs/$(basename "$run_b")" ] || fail "fetch wrote outside the race"
echo ok
