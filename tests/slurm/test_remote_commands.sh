#!/usr/bin/env bash
# From the user's own machine (this host, outside the cluster's namespaces):
# `status`, `logs`, `cancel` and `report` with `--on login-V` run on the
# login host, in the folder that holds the runs, with the login host's
# ddpctl of this version, through the user's ssh: the probe and the command,
# two ssh calls each. Their output and exit status are those the same
# command gives on the login node. A login host without this version, and a
# folder that is not there, are clear errors. (Submitting from here is not
# built yet: the job below is submitted on the login node.)
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
host=login-$SLURM_VERSION
state=${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}
[ -d "$state/user-bin" ] || fail "the local cluster has no $state/user-bin on its ssh sessions' PATH: run scripts/local-slurm$([ "$SLURM_VERSION" = 22.05 ] || echo " --slurm $SLURM_VERSION") down and up"
write_spec job.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, -c, 'echo "training here"; sleep 300']
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
deadline=$((SECONDS + 60))
until grep -q "training here" "logs/${JOB_NAME}_$id.restart0.0.out" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $id did not start training within 60 s$(jobs_report)"
  sleep 0.2
done

# The user's machine: their home, ssh config (as in test_remote_doctor.sh).
export HOME=$T/home
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME/.ssh"
"$LOCAL_SLURM" ssh-config >"$HOME/.ssh/config"
export DDPCTL_SSH_COMMAND="ssh -F $HOME/.ssh/config"
at_exit "ssh -F '$HOME/.ssh/config' -o ControlPath='$HOME/.ssh/ddpctl-%C' -O exit $host"
# remote ARGS...: ddpctl here, with --on; out, err and code as run sets them.
remote() {
  set +e
  "$DDPCTL" "$@" --on "$host" >"$T/rout" 2>"$T/rerr"
  rcode=$?
  set -e
}

# 1. The login host has no ddpctl of this version: a clear error, before anything runs there.
remote status --remote-dir "$T"
[ "$rcode" -eq 1 ] || fail "status --on a host without this version ended with $rcode: $(cat "$T/rerr")"
grep -qF "ddpctl: error: --on: $host has none of this version (" "$T/rerr" ||
  fail "no clear error for a host without this version: $(cat "$T/rerr")"

# The login host gets this version (as a cluster that installed it).
ln -sfn "$DDPCTL" "$state/user-bin/ddpctl"
at_exit "rm -f '$state/user-bin/ddpctl'"

# 2. status: the login node's table, through two ssh calls.
run status "$JOB_NAME"
expect_code 0
remote status "$JOB_NAME" --remote-dir "$T"
[ "$rcode" -eq 0 ] || fail "status --on ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "status --on: $(cat "$T/rout")"
grep -qE "^$JOB_NAME-[^ ]+ +$id .*RUNNING" "$T/rout" || fail "status --on does not show job $id RUNNING: $(cat "$T/rout" "$T/rerr")"
[ "$(head -n1 "$T/rout")" = "$(head -n1 "$T/out")" ] || fail "status --on's header differs from the login node's: $(cat "$T/out")"
grep -qE "^$JOB_NAME-[^ ]+ +$id .*RUNNING" "$T/out" || fail "status on the login node does not show job $id RUNNING: $(cat "$T/out")"
# Step 1 opened ddpctl's connection (ControlPersist); this command used it.
grep -qxF "ddpctl: ran on $host in $T with $state/user-bin/ddpctl through ddpctl's open ssh connection to $host ($HOME/.ssh/ddpctl-%C): 2 ssh call(s)" "$T/rerr" ||
  fail "status --on does not say where it ran and its ssh calls: $(cat "$T/rerr")"

# 3. A run that is not there: the login node's error and exit status.
run status no-such-run
[ "$code" -ne 0 ] || fail "status of no such run succeeded on the login node: $(cat "$T/out")"
remote status no-such-run --remote-dir "$T"
[ "$rcode" -eq "$code" ] || fail "status --on of no such run ended with $rcode, the login node's with $code: $(cat "$T/rerr")"
# (The test's login-node commands name the runs folder by DDPCTL_RUNS, absolute; the session there finds ./runs.)
grep -qF "ddpctl: error: 'no-such-run': no run with this name or id under" "$T/err" || fail "status on the login node: $(cat "$T/err")"
grep -qF "ddpctl: error: 'no-such-run': no run with this name or id under" "$T/rerr" ||
  fail "status --on of no such run does not say what the login node says ($(cat "$T/err")): $(cat "$T/rerr")"

# 4. logs: the job's output.
remote logs "$id" --remote-dir "$T"
[ "$rcode" -eq 0 ] || fail "logs --on ended with $rcode: $(cat "$T/rerr")"
grep -q "training here" "$T/rout" || fail "logs --on does not show the job's output: $(cat "$T/rout" "$T/rerr")"

# 5. A folder that is not there: said, with --remote-dir.
remote status --remote-dir "$T/nope"
[ "$rcode" -eq 1 ] || fail "status --on in a folder that is not there ended with $rcode"
grep -qF "ddpctl: error: --on $host: there is no folder $T/nope there; --remote-dir names the folder" "$T/rerr" ||
  fail "no clear error for a folder that is not there: $(cat "$T/rerr")"
# This folder is not under the user's home here: ddpctl cannot guess the folder there.
remote status
[ "$rcode" -eq 1 ] || fail "status --on without --remote-dir outside the home ended with $rcode"
grep -qF -- "--remote-dir: $T is not under your home here ($HOME)" "$T/rerr" || fail "no clear error without --remote-dir: $(cat "$T/rerr")"

# 6. cancel: the job ends CANCELLED, as cancel on the login node confirms it.
remote cancel "$JOB_NAME" --remote-dir "$T"
[ "$rcode" -eq 0 ] || fail "cancel --on ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "cancel --on: $(cat "$T/rout" "$T/rerr")"
wait_for_sacct "$id" CANCELLED 60

# 7. report: as on the login node.
run report "$JOB_NAME"
remote report "$JOB_NAME" --remote-dir "$T"
[ "$rcode" -eq "$code" ] || fail "report --on ended with $rcode, the login node's with $code: $(cat "$T/rerr")"
diff "$T/out" "$T/rout" || fail "report --on differs from report on the login node"
