#!/usr/bin/env bash
# One run raced across two sites (docs/race.md "Across sites"): the local
# 26.05 and 24.11 clusters (scripts/local-slurm --slurm V up, both), each
# reached over ssh through its own login host from this host. RACES
# (default 50) races, each with a backlog at each site: with probability
# 2/3 a blocker job holding the site's cpu partition for 1-15 s (random);
# in every fifth race the coordinator is killed as soon as it starts, and
# run again by hand (`ddpctl coordinate RUN`) 0-30 s later. The gate is
# GATE seconds (default 20). Each training writes its start and end.
# Prints per race, then: duplicate training seconds (overlap of two
# trainings: must be 0), seconds at the gate (the winner's: median, max;
# every job's, summed), the time from the first job to start at any site to
# training (what the claim costs against the better single site, whose own
# job would have trained at that start: median, max), and ssh calls per race
# (the coordinator's; the submissions' in their logs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
export DDPCTL_SLURM_STATE=${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm-26.05}
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
races=${RACES:-50} gate_s=${GATE:-20}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$root/tests/slurm/remote_lib.sh"
JOB_NAME=bench-race-sites
# shellcheck source=tests/slurm/sites_lib.sh
source "$root/tests/slurm/sites_lib.sh"
write_spec job.yaml <<YAML
on: $host
remote_dir: $site_b
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: 'date +%s.%N >"\$PWD/trained.\$SLURM_JOB_ID"; sleep 2; date +%s.%N >>"\$PWD/trained.\$SLURM_JOB_ID"'
alternatives:
  - {on: login-24.11, remote_dir: $site_a, label: a}
YAML
nodes_a=$(on_other sinfo -h -p cpu -o %D)
nodes_b=$(on_login sinfo -h -p cpu -o %D)
# blocker SITE: maybe a job holding the site's cpu partition for 1-15 s.
blocker() {
  [ $((RANDOM % 3)) -ne 0 ] || return 0
  local s=$((1 + RANDOM % 15))
  if [ "$1" = a ]; then
    on_other sbatch --parsable -p cpu -N "$nodes_a" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap "sleep $s" >/dev/null
  else
    on_login sbatch --parsable -p cpu -N "$nodes_b" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap "sleep $s" >/dev/null
  fi
  echo "$1:${s}s"
}
results=$T/results
: >"$results"
for i in $(seq "$races"); do
  rm -f "$site_a"/trained.* "$site_b"/trained.*
  blocks="$(blocker a) $(blocker b)"
  gate=$gate_s submit_race --again
  killed=no
  if [ $((i % 5)) -eq 0 ]; then
    until [ -s "$race/coordinator.pid" ]; do sleep 0.1; done
    kill "$(cat "$race/coordinator.pid")"
    killed=yes
    sleep $((RANDOM % 31))
    "$DDPCTL" coordinate "$(basename "$race")" --for 400 >>"$race/coordinator.log" 2>&1 || true
  fi
  wait_race_over >/dev/null
  python3 - "$race" "$site_a" "$site_b" "$i" "$killed" "$blocks" >>"$results" <<'PY'
import glob, json, os, re, sys
race, site_a, site_b, i, killed, blocks = sys.argv[1:]
spans, starts, gate_all, winner_wait = [], [], 0.0, None
for site in (site_a, site_b):
    for f in glob.glob(os.path.join(site, "trained.*")):
        t = [float(x) for x in open(f).read().split()]
        spans.append((t[0], t[-1]))
    for gate in glob.glob(os.path.join(site, "runs", "*", "race", "gate")):
        if json.load(open(os.path.join(gate, "site.json")))["coordinator"] != os.path.basename(race):
            continue
        for at in glob.glob(os.path.join(gate, "at.*")):
            job = at.rsplit(".", 1)[1]
            t_at = float(open(at).read().split()[2])
            starts.append(t_at)
            end = None
            for name in ("passed", "timeout"):
                p = os.path.join(gate, f"{name}.{job}")
                if os.path.exists(p):
                    end = float(open(p).read().split()[2])
                    if name == "passed":
                        winner_wait = end - t_at
                    break
            sd = os.path.join(gate, "..", f"stood-down.{job}")
            if end is None and os.path.exists(sd):
                end = float(open(sd).read().split()[2])
            gate_all += max(0.0, (end or t_at) - t_at)
spans.sort()
dup = sum(max(0.0, min(a[1], b[1]) - b[0]) for k, a in enumerate(spans) for b in spans[k + 1:])
first = min(starts) if starts else None
to_train = spans[0][0] - first if spans and first else None
log = open(os.path.join(race, "coordinator.log")).read()
calls = sum(int(n) for n in re.findall(r"; (\d+) ssh call\(s\)$", log, re.M))
sub = 0
for f in glob.glob(os.path.join(race, "site.*.submit.log")):
    sub += sum(int(n) for n in re.findall(r"(\d+) ssh call\(s\)", open(f).read()))
print(json.dumps({"race": int(i), "killed": killed == "yes", "blocks": blocks.split(), "trainings": len(spans),
                  "duplicate_s": dup, "winner_gate_s": winner_wait, "gate_s_all": gate_all,
                  "to_training_s": to_train, "coordinator_ssh": calls, "submit_ssh": sub}))
PY
  tail -n1 "$results"
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med_max(v):
    v = [x for x in v if x is not None]
    return f"median {statistics.median(v):.1f} s, max {max(v):.1f} s" if v else "none"
print(f"races: {len(rows)} ({sum(r['killed'] for r in rows)} with the coordinator killed)")
print(f"duplicate training seconds: {sum(r['duplicate_s'] for r in rows):.1f}; races with no training: "
      f"{sum(r['trainings'] == 0 for r in rows)}; with two: {sum(r['trainings'] > 1 for r in rows)}")
for killed in (False, True):
    rs = [r for r in rows if r["killed"] == killed]
    what = "coordinator killed" if killed else "coordinator running"
    print(f"{what}: winner at the gate {med_max([r['winner_gate_s'] for r in rs])}; every job at a gate "
          f"{sum(r['gate_s_all'] for r in rs):.0f} s summed; first start to training {med_max([r['to_training_s'] for r in rs])}")
print(f"ssh calls per race: coordinator {statistics.median([r['coordinator_ssh'] for r in rows]):.0f} (median), "
      f"submissions {statistics.median([r['submit_ssh'] for r in rows]):.0f} (median, both sites)")
PY
