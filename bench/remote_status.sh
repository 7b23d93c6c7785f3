#!/usr/bin/env bash
# From the user's machine (this host, outside the cluster's namespaces),
# with 0 and 50 ms of round trip added to the link between it and the
# cluster: the wall time and ssh calls of
#   ddpctl status --on      status of RUNS ended runs (ddpctl's connection
#                           open, as after the first command), and the first
#                           command of a session (it opens the connection)
#   ddpctl logs --on        one job's log
# against what users script today for less information: `ssh login squeue`
# and `ssh login sacct -j <ids>` (state and times, no reasons, progress or
# failure explained), each a new ssh connection, and the same two calls over
# an open connection (ControlMaster). REPS (default 5) each; medians.
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

# time_ms CMD...: CMD's wall time in ms; its output into $T/last.
time_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$T/last" 2>&1 || fail "$* failed: $(cat "$T/last")"
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
calls_of_last() { sed -n 's/.*: \([0-9]*\) ssh call(s)$/\1/p' "$T/last" | tail -n1; }

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
  done
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl status --on (first: opens the connection)" "$calls_first" "$(median "${t[first]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl status --on" "$calls_status" "$(median "${t[status]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ddpctl logs --on" "$calls_logs" "$(median "${t[logs]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ssh squeue + ssh sacct (new connections)" 2 "$(median "${t[plain]}")"
  printf '%-8s %-44s %8s %10s\n' "${delay} ms" "ssh squeue + ssh sacct (open connection)" 2 "$(median "${t[mux]}")"
  unset t
done
