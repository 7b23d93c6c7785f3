#!/usr/bin/env bash
# A race across two sites whose coordinator is gone (the laptop slept, the
# process was killed), as docs/race.md "Across sites" says: each site's job
# that starts waits at its gate for --gate-timeout, then stands down held
# (requeued, held: no GPU time, its place kept); nobody trains. A coordinator
# run again (`ddpctl coordinate RUN`) grants one of them, which is released
# and trains; the other site's job is cancelled. Never two trainings.
# A journey over two clusters at once: on 22.05's lane (the shortest),
# holding 24.11's.
# slurm versions: 22.05
# resource locks: local_slurm_2411
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
# shellcheck source=tests/slurm/sites_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/sites_lib.sh"

# Submitted held (sbatch --hold), so that the coordinator is gone before any
# job starts; then released at both sites.
gate=10 submit_race --set hold=true
deadline=$((SECONDS + 60))
until [ -s "$race/coordinator.pid" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the coordinator never started: $(cat "$race/coordinator.log" 2>&1)"
  sleep 0.2
done
kill "$(cat "$race/coordinator.pid")"
echo "coordinator killed: $(cat "$race/coordinator.log")"
a_job=$(cat "$site_a"/runs/*/race/jobs/a)
b_job=$(cat "$site_b"/runs/*/race/jobs/1x1)
on_other scontrol release "$a_job"
on_login scontrol release "$b_job"
# Each starts, waits 10 s at its gate and stands down held.
for site in a b; do
  dir=$site_a job=$a_job
  [ "$site" = a ] || dir=$site_b job=$b_job
  deadline=$((SECONDS + 120))
  until [ -n "$(find "$dir/runs" -path "*/race/gate/timeout.$job")" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "site $site's job $job did not stand down at its gate within 2 minutes: $(cat "$dir"/logs/*"$job"* 2>&1)"
    sleep 0.5
  done
done
trained=$(cd "$T" && find site-a site-b -maxdepth 1 -name 'trained.*' | tr '\n' ' ')
[ -z "$trained" ] || fail "a job trained without a grant: $trained"
state_a=$(on_other squeue -h -j "$a_job" -o '%T %r')
state_b=$(on_login squeue -h -j "$b_job" -o '%T %r')
echo "without a coordinator: site a job $a_job $state_a; site b job $b_job $state_b"
[[ $state_a == PENDING* && $state_b == PENDING* ]] || fail "the jobs did not stand down held: a: $state_a, b: $state_b"

# A coordinator again: one of them is granted and released; it trains once
# Slurm starts it again (a requeued job waits out its BeginTime first).
run_here coordinate "$(basename "$race")" --poll 1 --for 230
[ "$rcode" -eq 0 ] || fail "coordinate ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "coordinate: $(cat "$T/rout")"
grep -qF "granted job" "$T/rout" || fail "the coordinator granted nobody: $(cat "$T/rout")"
wait_race_over
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "trained: '$trained', expected exactly one job"
echo "without a coordinator nobody trained; the coordinator run again granted ${trained%%/*}"
