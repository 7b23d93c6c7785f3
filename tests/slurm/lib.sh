#!/usr/bin/env bash
# Sourced by the end-to-end tests that talk to the real local Slurm cluster
# (scripts/local-slurm up). ddpctl runs on the cluster's login host; each test
# uses its own job name and cancels its jobs when it ends.
# shellcheck source=tests/cli/lib.sh
source "$DDPCTL_SOURCE/tests/cli/lib.sh"
LOCAL_SLURM="$DDPCTL_SOURCE/scripts/local-slurm"
"$LOCAL_SLURM" exec -- scontrol ping >/dev/null 2>&1 ||
  fail "the local Slurm cluster is not up: run scripts/local-slurm up (scripts/test does)"
export DDPCTL_RUNS="$T/runs" DDPCTL_POLL_INTERVAL=0.5 DDPCTL_SLURM_TIMEOUT=20
# Which Slurm this run tests (DDPCTL_SLURM_STATE picks the cluster): 22.05 or 24.11.
# shellcheck disable=SC2034  # read by the tests
SLURM_VERSION=$(cat "${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}/slurm-version" 2>/dev/null || echo 22.05)
JOB_NAME="t-$(basename "$0" .sh | tr '_' '-' | cut -c6-40)"

# at_exit COMMAND: runs COMMAND (a string) when the test ends, before its jobs
# are cancelled, keeping the test's exit status for keep_on_failure.
at_exit_commands=()
at_exit() { at_exit_commands+=("$1"); }

cleanup_jobs() {
  local rc=$? c deadline=$((SECONDS + 60))
  # The real Slurm commands, not a test's fakes.
  local PATH=${PATH#"$T/fakebin:"}
  for c in "${at_exit_commands[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
  # The test's jobs by name, and by working folder: a race's shapes are named
  # "$JOB_NAME-<label>", and a prefix of names could reach another test's.
  local ids
  ids=$(own_live_jobs)
  # shellcheck disable=SC2086  # one id per word
  [ -z "$ids" ] || "$LOCAL_SLURM" exec -- scancel $ids >/dev/null 2>&1 || true
  "$LOCAL_SLURM" exec -- scancel --name="$JOB_NAME" >/dev/null 2>&1 || true
  # Jobs write into $T (logs, race claims) until they are gone: wait for them,
  # so that removing $T does not race a job still writing there.
  local since=$SECONDS
  while [ -n "$(own_live_jobs)" ] && [ "$SECONDS" -lt "$deadline" ]; do
    pause_since "$since"
  done
  [ -n "$(own_live_jobs)" ] || agent_outlived_jobs || rc=1
  return "$rc"
}
# agent_processes_left: the job agent's processes (ddpctl job sample, watch,
# ...) working in this test's folder, one "pid args" line each.
agent_processes_left() {
  local pid cwd
  for pid in $(pgrep -f -- ' job (sample|watch|check|stacks) ' || true); do
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
    [[ $cwd == "$T" || $cwd == "$T"/* ]] || continue
    echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
  done
}
# agent_outlived_jobs: with the test's jobs gone, none of their agent's
# processes may be left: one that is would sample or watch on for ever on a
# cluster whose proctrack does not follow orphans (linuxproc, these ones).
# It is named and killed, and the test fails.
agent_outlived_jobs() {
  local left deadline=$((SECONDS + 20))
  while left=$(agent_processes_left) && [ -n "$left" ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  [ -n "$left" ] || return 0
  echo "FAIL: the job agent outlived the test's jobs:"$'\n'"$left" >&2
  # shellcheck disable=SC2046  # one pid per word
  kill $(cut -d' ' -f1 <<<"$left") 2>/dev/null || true
  return 1
}
# submit_at_once N SPEC: N ddpctls submitting SPEC at the same moment, each's
# output in out.I and err.I (I from 1); fails naming any that failed.
submit_at_once() {
  local n=$1 spec=$2 i pids=()
  for i in $(seq "$n"); do
    "$LOCAL_SLURM" exec -- "$DDPCTL" submit "$spec" >"out.$i" 2>"err.$i" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "submit $((i + 1)) failed: $(cat "out.$((i + 1))" "err.$((i + 1))")"$'\n'"$(jobs_report)"
  done
}
# jobs_report: what Slurm says of this test's jobs, for a failure message.
jobs_report() {
  echo "squeue:"
  "$LOCAL_SLURM" exec -- squeue -h -a -o '%i %j %T %r %N %Z' 2>&1 | grep -F -e "$JOB_NAME" -e "$T" || true
  echo "sacct:"
  "$LOCAL_SLURM" exec -- sacct -a -X -n -S now-3600 -o JobID,JobName%50,State,ExitCode,Reason%30,WorkDir%60 2>&1 |
    grep -F -e "$JOB_NAME" -e "$T" || true
}
# own_live_jobs: ids of this test's jobs not yet ended, named after it or
# submitted from its folder $T (a pending array by its array's id).
own_live_jobs() {
  local out
  out=$("$LOCAL_SLURM" exec -- squeue -h -a -t PENDING,CONFIGURING,RUNNING,COMPLETING,SUSPENDED -o '%i|%j|%Z' \
    2>/dev/null) || return 0
  # A pending array's collapsed record ("12_[0-3%2]"; 26.05 also "12_[0]")
  # stands for its array: squeue -j and scancel take the array's id.
  awk -F'|' -v n="$JOB_NAME" -v t="$T" '$2 == n || $3 == t || index($3, t "/") == 1 { id = $1; sub(/_\[.*$/, "", id); print id }' <<<"$out" | sort -u
}
trap 'cleanup_jobs; keep_on_failure' EXIT

# skip WHY: this version's cluster lacks what the test needs, by design (a
# container runtime only one version's nodes have); CTest shows it skipped.
skip() {
  echo "skipped on Slurm $SLURM_VERSION: $*"
  exit 77
}
# The images scripts/container-images built, in the clusters' shared folder.
IMAGES=$("$DDPCTL_SOURCE/scripts/container-images" path)
# container_test_image RUNTIME: the image a container test runs, on the one
# version whose nodes have RUNTIME (26.05: apptainer; 22.05: charliecloud);
# skips on the others, fails where the image is missing.
container_test_image() {
  local want image
  case "$1" in
    apptainer) want=26.05 image=$IMAGES/torch.sif ;;
    charliecloud) want=22.05 image=$IMAGES/torch-root ;;
    *) fail "no test image for runtime $1" ;;
  esac
  [ "$SLURM_VERSION" = "$want" ] || skip "$1 runs on the Slurm $want cluster's nodes (scripts/container-images)"
  [ -e "$image" ] || fail "no $image: run scripts/container-images all (scripts/test does)"
  echo "$image"
}

# on_login CMD...: runs CMD on the login host.
on_login() { "$LOCAL_SLURM" exec -- "$@"; }

# pause_since START: the pause between two polls of a wait that began at
# $SECONDS START: 0.2 s for its first 3 s, where most waits end, then 0.5 s,
# and 1 s after 15 s. A poll of Slurm through the login host costs ~50 ms of
# CPU here (ctest runs three clusters' tests on 2 cores), so a wait of a
# minute at 0.2 s spent ~15 s of CPU; this spends ~4, a second late at most.
# (Most waits are short: on a slice of 26.05's tests it saved little.)
pause_since() {
  local waited=$((SECONDS - $1))
  if [ "$waited" -lt 3 ]; then
    sleep 0.2
  elif [ "$waited" -lt 15 ]; then
    sleep 0.5
  else
    sleep 1
  fi
}

# run ARGS...: ddpctl on the login host, capturing stdout, stderr, exit code.
run() {
  set +e
  "$LOCAL_SLURM" exec -- "$DDPCTL" "$@" >"$T/out" 2>"$T/err"
  code=$?
  set -e
}

# write_spec FILE: the run spec on stdin (KEY: VALUE lines), named after the
# test, for the local cluster, with a 5-minute limit unless it sets time:.
write_spec() {
  local body
  body=$(cat)
  {
    echo "name: $JOB_NAME"
    echo "cluster: local"
    grep -q '^time:' <<<"$body" || echo "time: \"00:05:00\""
    printf '%s\n' "$body"
  } >"$1"
}

# job_ids: the ids of this test's jobs that Slurm knows, one per line.
job_ids() { on_login squeue -h -a -n "$JOB_NAME" -o %i | sort -n; }

# slurmctld_log_of ID...: the controller's last log lines about these jobs,
# for failure messages (why Slurm did what it did).
slurmctld_log_of() {
  local log="${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}/log/slurmctld.log" id pattern=""
  [ -r "$log" ] || return 0
  for id in "$@"; do pattern+="${pattern:+|}JobId=$id\b"; done
  [ -n "$pattern" ] || return 0
  printf '\nslurmctld.log about job(s) %s:\n' "$*"
  grep -E "$pattern" "$log" | tail -n 20 || true
}

# need_torchrun: sets $torchrun to Debian's torchrun (python3-torch, which
# scripts/setup installs), or fails saying what is missing.
need_torchrun() {
  torchrun=$(command -v torchrun || true)
  if [ -z "$torchrun" ] || ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    fail "torchrun and Debian's python3-torch are needed (scripts/setup installs python3-torch)"
  fi
}

# submitted_job_id: the job id the last `run submit` printed ("submitted job N ...").
submitted_job_id() {
  local id
  id=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/out")
  [ -n "$id" ] || fail "submit printed no job id: $(cat "$T/out" "$T/err")"
  echo "$id"
}

# test_job_ids: every job of this test Slurm still shows, ended ones included.
test_job_ids() { on_login squeue -h -t all -n "$JOB_NAME" -o %i 2>/dev/null | sort -n | tr '\n' ' '; }

# wait_for_state RUN STATE [SECONDS]: polls `ddpctl status --json` until the
# run's first row is STATE; on a timeout, says what status and slurmctld said.
wait_for_state() {
  local run=$1 want=$2 deadline=$((SECONDS + ${3:-60})) since=$SECONDS state json
  while :; do
    json=$("$LOCAL_SLURM" exec -- "$DDPCTL" status "$run" --json 2>/dev/null || true)
    # The first "state" line without `head` (no SIGPIPE under pipefail).
    state=$(sed -n 's/.*"state": "\([A-Z_]*\)".*/\1/p' <<<"$json")
    state=${state%%$'\n'*}
    [ "$state" = "$want" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      # shellcheck disable=SC2046  # one word per job id
      fail "run $run did not reach $want within ${3:-60}s (last: ${state:-none}); status:
$("$LOCAL_SLURM" exec -- "$DDPCTL" status "$run" 2>&1 || true)$(slurmctld_log_of $(test_job_ids))"
    fi
    pause_since "$since"
  done
}

# wait_for_job ID STATE [SECONDS]: polls squeue until job ID is in STATE (a
# blocker job RUNNING, say); on a timeout, says what squeue and slurmctld said.
wait_for_job() {
  local id=$1 want=$2 limit=${3:-60} deadline state since=$SECONDS
  deadline=$((SECONDS + limit))
  while :; do
    state=$(on_login squeue -h -t all -j "$id" -o %T 2>/dev/null || true)
    [ "$state" = "$want" ] && return 0
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "job $id was not $want within ${limit}s (last: ${state:-not in squeue}): $(on_login squeue -h -t all -o '%i %j %T %r %N' 2>&1 || true)$(slurmctld_log_of "$id")"
    pause_since "$since"
  done
}

# job_logs_of ID: the last lines of what job ID wrote into the test's logs/
# (its batch log, its tasks' step logs), for a failure's message.
# rank_pid JOB RANK: the pid of job JOB's ddp-train process whose
# environment says RANK=RANK, or nothing.
rank_pid() {
  local pid env
  for pid in $(pgrep -x ddp-train || true); do
    env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null || true)
    if grep -qx "SLURM_JOB_ID=$1" <<<"$env" && grep -qx "RANK=$2" <<<"$env"; then echo "$pid"; fi
  done
}

job_logs_of() {
  local f
  for f in "$T"/logs/*_"$1".err "$T"/logs/*_"$1".restart*.out "$T"/logs/*_"$1"_*.err; do
    [ -s "$f" ] || continue
    printf '\n%s (last lines):\n%s' "${f#"$T"/}" "$(tail -n 8 "$f")"
  done
}

# wait_for_sacct ID STATE [SECONDS]: polls sacct until it records job ID as
# STATE (slurmdbd records the end a moment after the job ends).
wait_for_sacct() {
  local id=$1 want=$2 limit=${3:-60} deadline state since=$SECONDS
  deadline=$((SECONDS + limit))
  while :; do
    state=$(on_login sacct -n -X -P -j "$id" -o State 2>/dev/null | cut -d' ' -f1 || true)
    [ "$state" = "$want" ] && return 0
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "sacct did not record job $id as $want within ${limit}s (last: ${state:-no record})$(slurmctld_log_of "$id")$(job_logs_of "$id")"
    pause_since "$since"
  done
}

# wait_for_completed_after_requeue ID LIMIT: waits until job ID completes,
# through its requeue. Slurm holds a requeued job back (BeginTime,
# cred_expire: 2 min); it is started sooner, but not within seconds of the
# requeue: slurmd revokes the old run's credential by the second, and a new
# launch of the same job id on the same node within that second is refused
# ("Job credential revoked").
wait_for_completed_after_requeue() {
  local id=$1 limit=$2 deadline state pending_since=""
  deadline=$((SECONDS + limit))
  while :; do
    state=$(on_login squeue -h -j "$id" -o '%T %r' 2>/dev/null || true)
    case "$state" in
      PENDING*BeginTime*)
        pending_since=${pending_since:-$SECONDS}
        [ $((SECONDS - pending_since)) -lt 3 ] || on_login scontrol update JobId="$id" StartTime=now ;;
    esac
    [ "$(on_login sacct -n -X -P -j "$id" -o State 2>/dev/null || true)" = COMPLETED ] && return 0
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "job $id did not complete: $state"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"$'\n'"$(jobs_report)"
    sleep 0.5
  done
}

# slurm_command_path NAME: where the login host finds NAME (24.11: the
# wrapper that runs the chroot's), or nothing.
# shellcheck disable=SC2016  # expanded by that shell
slurm_command_path() { "$LOCAL_SLURM" exec -- sh -c 'command -v "$1" || true' sh "$1"; }

# fake_command NAME BODY: a fake NAME first on PATH (fault injection only).
# $REAL is the real command's path inside BODY.
fake_command() {
  local name=$1 body=$2 real
  real=$(slurm_command_path "$name")
  mkdir -p "$T/fakebin"
  printf '#!/bin/bash\nREAL=%q\n%s\n' "$real" "$body" >"$T/fakebin/$name"
  chmod +x "$T/fakebin/$name"
  export PATH="$T/fakebin:$PATH"
}

# hold_submissions: from now on sbatch holds every job this test submits
# (--hold; Slurm reads no environment variable for it), so the test releases
# them with `scontrol release` when it is ready, whatever the machine's speed.
# shellcheck disable=SC2016  # expanded when the fake runs
hold_submissions() { fake_command sbatch 'exec "$REAL" --hold "$@"'; }

# only_run_dir: the one run directory under $DDPCTL_RUNS.
only_run_dir() {
  local dirs=("$DDPCTL_RUNS"/*/)
  [ "${#dirs[@]}" -eq 1 ] || fail "expected one run directory, found ${#dirs[@]}"
  [ -d "${dirs[0]}" ] || fail "expected one run directory, found none under $DDPCTL_RUNS"
  echo "${dirs[0]%/}"
}

# A profile named "drift" that claims more than the local cluster has, so that
# only the live preflight (sinfo, sacctmgr) can catch the difference.
use_drifted_profile() {
  mkdir -p "$T/clusters"
  cat >"$T/clusters/drift.yaml" <<'YAML'
name: drift
gpu_request: gres
default_partition: cpu
interface: ib0
gpu_types:
  a100: {gres: a100}
  h100: {gres: h100}
partitions:
  a100-80gb: {nodes: 2, gpus_per_node: 8, gpu_types: [a100, h100], cpus_per_node: 8}
  h100: {nodes: 4, gpus_per_node: 4, gpu_types: [h100]}
  cpu: {nodes: 8, gpus_per_node: 0, cpus_per_node: 2}
YAML
  export DDPCTL_CLUSTERS="$T/clusters"
}

# expect_nothing_submitted: no job of this test reached Slurm.
expect_nothing_submitted() {
  [ -z "$(job_ids)" ] || fail "a job was submitted: $(job_ids)"
}

# A spec for the fault tests: a job that stays queued or running.
# write_long_spec FILE [held]: with "held", the spec's hold: true keeps the
# job pending (JobHeldUser) until the test releases or cancels it.
write_long_spec() {
  write_spec "$1" <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
$([ "${2:-}" = held ] && echo "hold: true")
YAML
}

# expect_jobs_held: every live job of this test is held by its user, as a
# spec's hold: true asks (squeue's reason JobHeldUser).
expect_jobs_held() {
  local reasons ids
  ids=$(own_live_jobs | tr '\n' ',')
  [ -n "$ids" ] || fail "no job of this test is queued to be held"
  reasons=$(on_login squeue -h -a -j "${ids%,}" -o '%i %T %r')
  [ -n "$reasons" ] || fail "no job of this test is queued to be held"
  if grep -qv ' PENDING JobHeldUser$' <<<"$reasons"; then
    fail "jobs not held: $reasons"
  fi
}

# ledger_outcomes: the outcome of every attempt in the one run, in order.
ledger_outcomes() { sed -n 's/.*"outcome": "\([a-z]*\)".*/\1/p' "$(only_run_dir)/ledger.json" | tr '\n' ' '; }
