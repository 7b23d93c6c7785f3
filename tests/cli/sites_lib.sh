#!/usr/bin/env bash
# Sourced by the CLI tests of a race across sites (docs/race.md "Across
# sites") against login hosts that may be wrong, slow or hostile, after
# lib.sh: no cluster, no network. A fake ssh (DDPCTL_SSH_COMMAND) runs the
# command line it is given here, as the login host would, in that host's
# own world: $T/hosts/<host>/ (the host without the user, lower case, so
# `h1`, `u@h1` and `H1` are one host) with its home, its fake Slurm queue
# (tests/cli/fake_slurm) and the real ddpctl under test on its PATH.
#
#   host_answers HOST SCRIPT   from now on HOST answers every race-gate call
#                              by running SCRIPT (sh) instead: a hostile,
#                              slow or hung site
#   at_gate HOST JOB           JOB at HOST started and waits at its run's
#                              gate, as the job script would make it
#   job_state HOST JOB STATE   the fake queue's state of JOB
#   site_run HOST              the folder of the run at HOST (the newest)
#   race_of                    the race's id, from the last `run submit`
#   coordinate_for SECONDS     `ddpctl coordinate $race`, in front, at most
#                              that long ($T/coord.log)
# Every ssh call is logged in $T/ssh.log.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v ssh >/dev/null || fail "OpenSSH's ssh is needed (scripts/setup installs it)"
mkdir -p "$T/bin" "$T/hosts"
cat >"$T/bin/ssh" <<'SH'
#!/usr/bin/env bash
# ssh [-o OPT]... [-n|-tt|-fN] HOST [-- LINE]: LINE run here, in HOST's world.
printf '%s\n' "$*" >>"$SITES_T/ssh.log"
host= line=
while [ $# -gt 0 ]; do
  case $1 in
    -o|-F|-p|-l|-i) shift 2 ;;
    -O) [ "$2" = check ] && exit 0; exit 0 ;;
    -n|-tt|-t|-fN|-N|-f) shift ;;
    --) line=$2; break ;;
    -*) shift ;;
    *) if [ -z "$host" ]; then host=$1; shift; else break; fi ;;
  esac
done
name=${host##*@}
name=${name,,}
world=$SITES_T/hosts/$name
mkdir -p "$world/home" "$world/slurm/bin"
for c in sbatch squeue sacct scontrol sinfo sacctmgr scancel srun; do
  [ -e "$world/slurm/bin/$c" ] || ln -s "$DDPCTL_SOURCE/tests/cli/fake_slurm" "$world/slurm/bin/$c"
done
if [ -f "$world/answers.sh" ] && [[ $line == *race-gate* ]]; then exec sh "$world/answers.sh"; fi
[ -n "$line" ] || exit 0
cd "$world/home" || exit 255
export HOME=$world/home FAKE_SLURM=$world/slurm PATH=$world/slurm/bin:$SITES_BIN:$PATH
export DDPCTL_CLUSTERS=$DDPCTL_SOURCE/configs/clusters
exec sh -c "$line"
SH
ln -s "$DDPCTL" "$T/bin/ddpctl"
chmod +x "$T/bin/ssh"
export SITES_T=$T SITES_BIN=$T/bin DDPCTL_SSH_COMMAND=$T/bin/ssh DDPCTL_CLUSTERS=$DDPCTL_SOURCE/configs/clusters
export PATH=$T/bin:$PATH
mkdir -p "$HOME/proj"
cd "$HOME/proj"
at_exit_kill() {
  local p
  for p in "$T"/home/proj/runs/*/coordinator.pid; do
    if [ -f "$p" ]; then kill "$(cat "$p")" 2>/dev/null || true; fi
  done
}
trap 'rc=$?; at_exit_kill; (exit $rc); keep_on_failure' EXIT
# stop_coordinator: the coordinator `submit` started for $race, stopped (the
# test runs its own, in front): it writes its pid as it starts.
stop_coordinator() {
  local pid_file=runs/${race:?}/coordinator.pid deadline=$((SECONDS + 30)) pid
  until [ -s "$pid_file" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "submit started no coordinator: $(cat "runs/$race/coordinator.log" 2>&1)"
    sleep 0.1
  done
  pid=$(cat "$pid_file")
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "the coordinator $pid did not stop"
    sleep 0.1
  done
}

host_answers() { printf '%s\n' "$2" >"$T/hosts/$1/answers.sh"; }
site_run() { find "$T/hosts/$1/home/proj/runs" -mindepth 1 -maxdepth 1 -type d -name "${2:-*}-2*" | sort | tail -n 1; }
race_of() { sed -n 's/^race \([^ ]*\) across .*/\1/p' "$T/out"; }
job_state() {
  local f=$T/hosts/$1/slurm/jobs sep=$'\x1f'
  awk -v id="$2" -v st="$3" -v FS="$sep" -v OFS="$sep" '$1 == id { $4 = st } { print }' "$f" >"$f.new" && mv "$f.new" "$f"
}
# at_gate HOST JOB [RUN]: JOB runs and waits at the gate of RUN (the newest run at HOST).
at_gate() {
  local run=${3:-$(site_run "$1")} label
  label=$(basename "$(find "$run/race/jobs" -type f -exec grep -lx "$2" {} + | sed -n 1p)")
  [ -n "$label" ] || fail "no shape of $run has job $2: $(ls -R "$run/race" 2>&1)"
  job_state "$1" "$2" RUNNING
  printf '%s %s %s 0\n' "$2" "$label" "$(date +%s)" >"$run/race/gate/at.$2"
}
coordinate_for() {
  set +e
  timeout 120 "$DDPCTL" coordinate "${race:?}" --poll 0.2 --for "$1" >"$T/coord.log" 2>&1
  code=$?
  set -e
}
