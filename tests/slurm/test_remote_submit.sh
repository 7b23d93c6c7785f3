#!/usr/bin/env bash
# From the user's own machine (this host, outside the cluster's namespaces),
# with --on login-V: submit, race and sweep send the spec and the code, and
# the login host's ddpctl of this version submits in the folder there.
# - The code is snapshotted here and sent once per state into the runs
#   folder's store there: a state the store has is not sent again, and the
#   job runs the snapshot (the laptop's files are not where the job runs:
#   the folder there is another one, $T/cluster).
# - The spec goes to the same place under that folder, so the login node's
#   own `ddpctl submit` of it there is the same run ("already submitted").
# - logs -f follows a job to its end over the connection, cancel stops the
#   jobs, fetch brings a run's records here, and report --plot its plot.
# The ssh calls of each command are counted by ddpctl and checked here.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
cluster_has_this_ddpctl
user_machine
cluster=$T/cluster  # the folder there
# The login node's ddpctl works in the folder there; ddpctl here in the project.
export DDPCTL_RUNS=$cluster/runs
proj=$HOME/proj
mkdir -p "$proj"
cd "$proj"
# remote ARGS...: ddpctl here (its runs folder ./runs), --on the login host.
remote() {
  set +e
  env -u DDPCTL_RUNS "$DDPCTL" "$@" --on "$host" --remote-dir "$cluster" >"$T/rout" 2>"$T/rerr"
  rcode=$?
  set -e
}
expect_remote() { [ "$rcode" -eq 0 ] || fail "$1 --on ended with $rcode: $(cat "$T/rout" "$T/rerr")"; }
# log_has TEXT: a job's output there has TEXT (within 60 s).
log_has() {
  local deadline=$((SECONDS + 60))
  until grep -rqF -- "$1" "$cluster/logs" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no job printed '$1' within 60 s$(jobs_report)"
    sleep 0.2
  done
}
git init -q
git config user.email test@example.org
git config user.name test
cat >train.sh <<'SH'
echo "code $(cat version.txt) in $PWD lr=${DDPCTL_GRID_LR:-none}"
if [ -n "${DDPCTL_GRID_LR:-}" ]; then echo "val_loss=$DDPCTL_GRID_LR"; fi
if [ "${1:-}" = wait ]; then sleep 300; fi
SH
echo v1 >version.txt
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh, wait]
YAML
git add -A
git commit -qm v1

# 0. A login that would ask for a code (MFA), with no connection open: ddpctl
# fails at once, prints the one ssh command that opens its connection, and
# sends nothing.
mfa_host
started=$(date +%s%N)
set +e
env -u DDPCTL_RUNS timeout 60 "$DDPCTL" submit job.yaml --on "$host-mfa" --remote-dir "$cluster" </dev/null >"$T/rout" 2>"$T/rerr"
rcode=$?
set -e
echo "submit --on a host that asks for a code: exit $rcode after $((($(date +%s%N) - started) / 1000000)) ms: $(cat "$T/rerr")"
[ "$rcode" -eq 1 ] || fail "submit --on $host-mfa ended with $rcode, not 1: $(cat "$T/rout" "$T/rerr")"
for said in "cannot reach $host-mfa through ssh without a prompt" "Permission denied (keyboard-interactive)"; do
  grep -qF "$said" "$T/rerr" || fail "no clear error for a host that asks for a code ($said): $(cat "$T/rerr")"
done
grep -qF "ssh -F $HOME/.ssh/config -o ControlMaster=yes -o ControlPath=$control -o ControlPersist=yes -fN $host-mfa" "$T/rerr" ||
  fail "the error does not print the command that opens the connection: $(cat "$T/rerr")"
[ ! -e "$cluster" ] || fail "something was sent to $cluster"

# 1. submit: the spec and the code go there; the job runs the snapshot.
remote submit job.yaml
expect_remote submit
echo "submit --on: $(cat "$T/rout" "$T/rerr")"
id1=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/rout")
[ -n "$id1" ] || fail "submit --on printed no job id: $(cat "$T/rout" "$T/rerr")"
snap=$(sed -n 's/.*code: snapshot \([0-9a-f]\{12\}\) (3 files, .*) sent; 3 ssh call(s)$/\1/p' "$T/rerr")
[ -n "$snap" ] || fail "submit --on does not say it sent the snapshot of 3 files in 3 ssh calls: $(cat "$T/rerr")"
grep -qF "ddpctl: ran on $host in $cluster with the cluster's $state/user-bin/ddpctl, the same version" "$T/rerr" ||
  fail "submit --on does not say where it ran and with which ddpctl: $(cat "$T/rerr")"
cmp -s job.yaml "$cluster/job.yaml" || fail "the spec is not at its place there ($cluster/job.yaml)"
stored=$(find "$cluster/runs/.snapshots" -mindepth 1 -maxdepth 1 -type d -name "$snap*")
[ -f "$stored/train.sh" ] || fail "the snapshot is not in the store there: $(ls -la "$cluster/runs/.snapshots")"
[ -d "runs/.snapshots/$(basename "$stored")" ] || fail "the snapshot was not taken here (./runs/.snapshots)"
[ -z "$(ls -A "$cluster/runs/.incoming" 2>/dev/null)" ] || fail "the submit left its bundle there: $(ls -R "$cluster/runs/.incoming")"
log_has "code v1 in $cluster/runs/$JOB_NAME-"
run1=$(basename "$(find "$cluster/runs" -mindepth 1 -maxdepth 1 -name "$JOB_NAME-*" -type d)")
grep -qF "\"sent_from\": \"$(hostname):$proj\"" "$cluster/runs/$run1/snapshot.json" ||
  fail "the run's snapshot.json does not say where the code was sent from: $(cat "$cluster/runs/$run1/snapshot.json")"

# 2. The same spec again: already submitted, and the code is not sent again.
remote submit job.yaml
expect_remote "submit (again)"
grep -qF "already submitted: job $id1 of run $run1" "$T/rout" || fail "a second submit --on is not 'already submitted': $(cat "$T/rout" "$T/rerr")"
grep -qE "code: snapshot $snap \(3 files, [^)]*\) was there already; 2 ssh call\(s\)$" "$T/rerr" ||
  fail "the second submit --on sent the code again, or took more than 2 ssh calls: $(cat "$T/rerr")"

# 3. The login node's own submit of the same spec in the folder there: the same run.
(
  cd "$cluster"
  run submit job.yaml
  expect_code 0
  expect_out "already submitted: job $id1 of run $run1"
)

# 4. Changed code (uncommitted): sent as a new state; the new job runs it.
echo v2 >version.txt
remote submit job.yaml --again
expect_remote "submit --again"
id2=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/rout")
if [ -z "$id2" ] || [ "$id2" = "$id1" ]; then fail "submit --again --on made no second job: $(cat "$T/rout" "$T/rerr")"; fi
run2=$(sed -n 's/^submitted job [0-9]* .* as run \([^ ]*\)$/\1/p' "$T/rout")
grep -qE "code: snapshot [0-9a-f]{12} \(3 files, .*\) sent; 3 ssh call\(s\)$" "$T/rerr" ||
  fail "the changed code was not sent: $(cat "$T/rerr")"
log_has "code v2 in $cluster/runs/$JOB_NAME-"

# 5. cancel: both jobs end CANCELLED.
remote cancel "$run1" "$run2"
expect_remote cancel
wait_for_sacct "$id1" CANCELLED 60
wait_for_sacct "$id2" CANCELLED 60

# 6. logs -f follows a job to its end, over the connection.
write_spec quick.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh]
YAML
remote submit quick.yaml
expect_remote "submit quick.yaml"
id3=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/rout")
run3=$(sed -n 's/^submitted job [0-9]* .* as run \([^ ]*\)$/\1/p' "$T/rout")
[ -n "$id3" ] || fail "submit --on quick.yaml printed no job id: $(cat "$T/rout" "$T/rerr")"
remote logs "$id3" -f
expect_remote "logs -f"
grep -qF "code v2 in $cluster/runs/$JOB_NAME-" "$T/rout" || fail "logs -f --on did not show the job's output: $(cat "$T/rout" "$T/rerr")"
wait_for_sacct "$id3" COMPLETED 60

# 7. fetch: the run's records come here, without its working directory.
remote fetch "$run3"
expect_remote fetch
grep -qF "fetched $run3 from $host: " "$T/rout" || fail "fetch --on does not say what it fetched: $(cat "$T/rout")"
for f in run.json ledger.json; do [ -f "runs/$run3/$f" ] || fail "the run's $f is not here: $(find runs -maxdepth 2)"; done
[ ! -e "runs/$run3/workdir" ] || fail "fetch brought the job's working directory"
# status --on refreshes the copies here (one more ssh call).
echo stale >"runs/$run3/ledger.json"
remote status "$run3"
expect_remote status
grep -qF "refreshed the copies here of 1 run(s) in runs: 3 ssh call(s)" "$T/rerr" || fail "status --on did not refresh the copy here: $(cat "$T/rerr")"
cmp -s "runs/$run3/ledger.json" "$cluster/runs/$run3/ledger.json" || fail "the copy's ledger is not the cluster's after status --on"

# 8. race: two shapes, the first to start trains.
write_spec race.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
remote submit race.yaml
expect_remote "submit race.yaml"
grep -qE "^submitted race of job [0-9]+ \(shape 1x1\), job [0-9]+ \(shape a100\)" "$T/rout" ||
  fail "submit --on of a spec with alternatives did not race: $(cat "$T/rout" "$T/rerr")"
race_run=$(sed -n 's/.* as run \([^ :]*\).*/\1/p' "$T/rout")
wait_for_state "$race_run" WON 90

# 9. sweep: a grid of two cells; report --plot's picture comes back.
write_spec grid.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh]
metric: 'val_loss=(?P<val_loss>[0-9.]+)'
grid:
  env.LR: ["0.1", "0.2"]
YAML
remote sweep grid.yaml
expect_remote sweep
grep -qF "2 cell(s)" "$T/rout" || fail "sweep --on did not submit the grid's 2 cells: $(cat "$T/rout" "$T/rerr")"
sweep=$(basename "$(find "$cluster/runs" -mindepth 1 -maxdepth 1 -type d -newer grid.yaml -name "$JOB_NAME-*" -exec test -f {}/grid.json \; -print)")
[ -n "$sweep" ] || fail "no sweep run there: $(ls "$cluster/runs")"
deadline=$((SECONDS + 120))
while :; do
  run report "$sweep" --best val_loss:min
  grep -q "2 cells: 2 done" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not end as 2 done: $(cat "$T/out" "$T/err")"
  sleep 1
done
remote report "$sweep" --best val_loss:min --plot grid.svg
expect_remote "report --plot"
grep -qF "brought grid.svg back" "$T/rerr" || fail "report --plot --on does not say it brought the plot back: $(cat "$T/rerr")"
grep -q "<svg" grid.svg || fail "grid.svg here is not the plot: $(head -c 300 grid.svg)"
cmp -s grid.svg "$cluster/grid.svg" || fail "grid.svg here differs from the one written there"
