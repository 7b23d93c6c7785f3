#!/usr/bin/env bash
# From the user's machine (this host, outside the cluster's namespaces),
# with 0 and 50 ms of round trip added to the link between it and the
# cluster: the wall time and ssh calls of
#   ddpctl status --on      status of RUNS ended runs (ddpctl's connection
#                           open, as after the first command), and the first
#                           command of a session (it opens the connection)
#   ddpctl logs --on        one job's log
#   ddpctl submit --on      a race of 3 shapes from a git work tree here:
#                           its code already in the store there, and changed
#                           (sent), each submitted and then cancelled; and
#                           the same submit on the login node itself
# against what users script today for less information: `ssh login squeue`
# and `ssh login sacct -j <ids>` (state and times, no reasons, progress or
# failure explained), each a new ssh connection, and the same two calls over
# an open connection (ControlMaster); for the race, three `ssh login sbatch
# shape.sh` over new connections and over an open one (the scripts already
# there: what users script today, without the race). REPS (default 5) each;
# medians.
# The latency: 25 ms each way on the ssh connection's own path, added by
# bench/delay_proxy.py in its ProxyCommand (this machine's kernel has no
# netem qdisc for `tc`); the login node's own talk with slurmctld is left
# alone, as on a site's LAN. The login host gets this version of ddpctl as in
# test_remote_commands.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
runs=${RUNS:-20} reps=${REPS:-5}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
host=login-$SLURM_VERSION
state=${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}
JOB_NAME=bench-remote-status

# RUNS ended runs, submitted on the login node.
for i in $(seq "$runs"); do
  write_spec "job$i.yaml" <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, -c, 'echo "run $i"']
YAML
  run submit "job$i.yaml" --no-preflight
  expect_code 0
  ids+=("$(submitted_job_id)")
done
deadline=$((SECONDS + 300))
until [ -z "$(on_login squeue -h -n "$JOB_NAME" -o %i)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the $runs jobs did not end within 300 s$(jobs_report)"
  sleep 1
done
run status --all
expect_code 0
ids_csv=$(IFS=,; echo "${ids[*]}")

# The user's machine.
export HOME=$T/home
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME/.ssh"
"$LOCAL_SLURM" ssh-config >"$HOME/.ssh/config.0"
sed "s|^  ProxyCommand |  ProxyCommand python3 $root/bench/delay_proxy.py 25 |" "$HOME/.ssh/config.0" >"$HOME/.ssh/config.50"
grep -q "delay_proxy.py 25" "$HOME/.ssh/config.50" || fail "no ProxyCommand to delay in: $(cat "$HOME/.ssh/config.0")"
control=$HOME/.ssh/ddpctl-%C
close_ddpctl_connection() { ssh -F "$HOME/.ssh/config.0" -o ControlPath="$control" -O exit "$host" 2>/dev/null || true; }
at_exit close_ddpctl_connection
ln -sfn "$DDPCTL" "$state/user-bin/ddpctl"
at_exit "rm -f '$state/user-bin/ddpctl'"

# The race: 3 shapes of one spec in a git work tree under the home here.
proj=$HOME/proj
mkdir -p "$proj"
(
  cd "$proj"
  git init -q
  git config user.email bench@example.org
  git config user.name bench
  printf 'echo "training"\nsleep 300\n' >train.sh
  write_spec race.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
  - {nodes: 2, label: two}
YAML
  git add -A
  git commit -qm bench
)
cluster=$T/cluster
for shape in a b c; do
  mkdir -p "$cluster"
  printf '#!/bin/bash\n#SBATCH -J %s-plain -p cpu -N 1 -t 5 -o /dev/null\nsleep 300\n' "$JOB_NAME" >"$cluster/$shape.sh"
done
cancel_all() { on_login scancel -n "$JOB_NAME" >/dev/null 2>&1 || true; on_login scancel -n "$JOB_NAME-plain" >/dev/null 2>&1 || true; }
at_exit cancel_all
race_on() { (cd "$proj" && env -u DDPCTL_RUNS "$DDPCTL" submit race.yaml --again --on "$host" --remote-dir "$cluster"); }
# The same race submitted on the login node itself (no ssh; the folder there
# is no git work tree, so no snapshot): what --on adds to it.
race_on_login() { (cd "$cluster" && DDPCTL_RUNS=$cluster/runs "$LOCAL_SLURM" exec -- "$DDPCTL" submit race.yaml --again); }
race_on_new_code() { (cd "$proj" && date +%s%N >stamp.txt && race_on); }
plain_sbatch() {
  local shape
  for shape in a b c; do ssh -F "$HOME/.ssh/config.$delay" -o ControlPath=none "$host" "cd $cluster && sbatch $shape.sh"; done
}
plain_sbatch_mux() {
  local shape
  for shape in a b c; do ssh -F "$HOME/.ssh/config.$delay" -o ControlPath="$control" "$host" "cd $cluster && sbatch $shape.sh"; done
}

# time_ms CMD...: CMD's wall time in ms; its output into $T/last.
time_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$T/last" 2>&1 || fail "$* failed: $(cat "$T/last")"
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
calls_of_last() { sed -n 's/.*[:;] \([0-9]*\) ssh call(s)$/\1/p' "$T/last" | tail -n1; }

status_on() { "$DDPCTL" status --all --on "$host" --remote-dir "$T"; }
logs_on() { "$DDPCTL" logs "${ids[0]}" --on "$host" --remote-dir "$T"; }
plain() {
  ssh -F "$HOME/.ssh/config.$delay" -o ControlPath=none "$host" "squeue -h -u root -o '%i %T %M'" &&
    ssh -F "$HOME/.ssh/config.$delay" -o ControlPath=none "$host" "sacct -n -X -P -j $ids_csv -o JobID,State,Elapsed,ExitCode"
}
plain_mux() {
  ssh -F "$HOME/.ssh/config.$delay" -o ControlPath="$control" "$host" "squeue -h -u root -o '%i %T %M'" &&
    ssh -F "$HOME/.ssh/config.$delay" -o ControlPath="$control" "$host" "sacct -n -X -P -j $ids_csv -o JobID,State,Elapsed,ExitCode"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Slurm $SLURM_VERSION, $runs ended runs, REPS=$reps"
printf '%-8s %-44s %8s %10s\n' delay command "ssh calls" "median ms"
for delay in 0 50; do
  export DDPCTL_SSH_COMMAND="ssh -F $HOME/.ssh/config.$delay"
  declare -A t=()
  for _ in $(seq "$reps"); do
    close_ddpctl_connection
    t[first]+="$(time_ms status_on) "
    calls_first=$(calls_of_last)
    t[status]+="$(time_ms status_on) "
    calls_status=$(calls_of_last)
    grep -q "$JOB_NAME" "$T/last" || fail "status --on did not list the runs: $(cat "$T/last")"
    t[logs]+="$(time_ms logs_on) "
    calls_logs=$(calls_of_last)
    t[plain]+="$(time_ms plain) "
    t[mux]+="$(time_ms plain_mux) "
    t[race_new]+="$(time_ms race_on_new_code) "
    calls_race_new=$(calls_of_last)
    grep -q "submitted race of job" "$T/last" || fail "submit --on did not race: $(cat "$T/last")"
    cancel_all
    t[race]+="$(time_ms race_on) "
    calls_race=$(calls_of_last)
    grep -q "was there already" "$T/last" || fail "submit --on sent the code again: $(cat "$T/last")"
    cancel_all
    t[login]+="$(time_ms race_on_login) "
    grep -q "submitted race of job" "$T/last" || fail "submit on the login node did not race: $(cat "$T/last")"
    cancel_all
    t[sbatch]+="$(time_ms plain_sbatch) "
    t[sbatch_mux]+="$(time_ms plain_sbatch_mux) "
    cancel_all
  done
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl status --on (first: opens the connection)" "$calls_first" "$(median "${t[first]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl status --on" "$calls_status" "$(median "${t[status]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl logs --on" "$calls_logs" "$(median "${t[logs]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ssh squeue + ssh sacct (new connections)" 2 "$(median "${t[plain]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ssh squeue + ssh sacct (open connection)" 2 "$(median "${t[mux]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl submit --on, race of 3 (code there)" "$calls_race" "$(median "${t[race]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl submit --on, race of 3 (code sent)" "$calls_race_new" "$(median "${t[race_new]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl submit on the login node, race of 3" 0 "$(median "${t[login]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "3 x ssh sbatch (new connections)" 3 "$(median "${t[sbatch]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "3 x ssh sbatch (open connection)" 3 "$(median "${t[sbatch_mux]}")"
  unset t
done
