#!/usr/bin/env bash
# One run raced across two sites (docs/race.md "Across sites"): the local
# 26.05 and 24.11 clusters, each reached over ssh through its own login host
# from this host (the user's machine). `ddpctl submit` of a spec naming both
# sites submits to each, and the coordinator it starts grants one job:
# 1. site b's only partition is held by another job: site a wins; site b's
#    job never trains and is cancelled by the stand-down;
# 2. both free: exactly one site trains (the other's job is cancelled, or
#    stood down at its gate), and the coordinator's record says who.
# A journey over two clusters at once: on 26.05's lane, holding 24.11's.
# slurm versions: 26.05
# resource locks: local_slurm_2411
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
# shellcheck source=tests/slurm/sites_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/sites_lib.sh"

# 1. Site b's cpu nodes are all taken by another job: site a wins.
nodes=$(on_login sinfo -h -p cpu -o %D)
blocker=$(on_login sbatch --parsable -p cpu -N "$nodes" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap 'sleep 600')
deadline=$((SECONDS + 60))
until [ "$(on_login squeue -h -j "$blocker" -o %T)" = RUNNING ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the blocker job $blocker did not start: $(on_login squeue -h -j "$blocker" -o '%T %r' 2>&1)"
  sleep 0.5
done
race_once
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "race 1: trained: '$trained', expected one job at site a"
[[ $trained == site-a/* ]] || fail "race 1: site b trained ($trained) while its partition was held"
grep -qF "granted job" "$race/coordinator.log" || fail "race 1: the coordinator's log names no grant"
grep -qF '"site":"login-24.11"' "$race/coordinator.done" || fail "race 1: coordinator.done: $(cat "$race/coordinator.done")"
b_job=$(cat "$site_b"/runs/*/race/jobs/1x1)
wait_for_sacct "$b_job" CANCELLED 60
[ -n "$(find "$site_b/runs" -path '*/race/gate/stand-down')" ] || fail "race 1: site b's gate was not told to stand down"
on_login scancel "$blocker"
rm -f "$site_a"/trained.* "$site_b"/trained.*

# 2. Both free: exactly one site trains.
race_once --again
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "race 2: trained: '$trained', expected exactly one job"
echo "races across sites: 1 blocked at site b, won by site a; 2 both free, won by ${trained%%/*}"
