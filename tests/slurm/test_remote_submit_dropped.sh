#!/usr/bin/env bash
# A connection that drops while the login host's ddpctl runs sbatch (the
# user's ssh master is killed; a laptop that sleeps): the submit here says
# that the job may or may not be queued, and running it again makes no
# second job. sbatch on the login host is a stand-in first on its ssh
# sessions' PATH that waits until the test has killed the master, then runs
# the real sbatch: the job is queued after the connection is gone.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
cluster_has_this_ddpctl
user_machine
at_exit "rm -f '$state/user-bin/sbatch'"
# The stand-in: the first sbatch that submits (not --test-only) says so and
# waits for the test's word; every sbatch then runs the real one.
cat >"$state/user-bin/sbatch" <<SH
#!/bin/sh
case " \$* " in *" --test-only "*) ;; *)
  if [ ! -e "$T/sbatch-started" ]; then
    : >"$T/sbatch-started"
    while [ ! -e "$T/sbatch-go" ]; do sleep 0.1; done
  fi ;;
esac
# The real sbatch: the first on PATH that is not this one.
rest=
IFS=:
for d in \$PATH; do [ "\$d" = "$state/user-bin" ] || rest=\$rest\${rest:+:}\$d; done
unset IFS
PATH=\$rest exec sbatch "\$@"
SH
chmod +x "$state/user-bin/sbatch"
cluster=$T/cluster
export DDPCTL_RUNS=$cluster/runs
mkdir -p "$HOME/proj"
cd "$HOME/proj"
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [sleep, "300"]
YAML
submit_here() { env -u DDPCTL_RUNS "$DDPCTL" submit job.yaml --on "$host" --remote-dir "$cluster"; }

submit_here >out1 2>err1 &
pid=$!
deadline=$((SECONDS + 60))
until [ -e "$T/sbatch-started" ]; do
  kill -0 "$pid" 2>/dev/null || fail "submit --on ended before sbatch ran: $(cat out1 err1)"
  [ "$SECONDS" -lt "$deadline" ] || fail "sbatch did not start within 60 s: $(cat out1 err1)"
  sleep 0.1
done
# The connection drops: its master (ddpctl's own, ControlPersist) is killed.
check=$(ssh -F "$HOME/.ssh/config" -o ControlPath="$control" -O check "$host" 2>&1) || fail "no master is open: $check"
master=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<<"$check")
[ -n "$master" ] || fail "ssh -O check names no master pid: $check"
kill -9 "$master"
set +e
wait "$pid"
code=$?
set -e
echo "submit --on after the master was killed: exit $code: $(cat out1 err1)"
[ "$code" -eq 1 ] || fail "submit --on whose connection dropped ended with $code, not 1: $(cat out1 err1)"
grep -qF "the ssh connection to $host failed while ddpctl submitted there" err1 ||
  fail "submit --on does not say the connection dropped: $(cat err1)"
grep -qF "running the same command again finds the job by its token" err1 || fail "submit --on does not say what to do: $(cat err1)"
# This folder is no git work tree: said before the submit, with what the job runs.
grep -qF "ddpctl: warning: no code goes with this job (not a git work tree" err1 || fail "no warning that no code goes along: $(cat err1)"
# sbatch runs there after the connection is gone.
: >"$T/sbatch-go"
deadline=$((SECONDS + 60))
until [ -n "$(job_ids)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the sbatch left running there queued no job within 60 s$(jobs_report)"
  sleep 0.2
done
id=$(job_ids)
# Again, over a new connection: the job is found, not submitted twice. (The
# ddpctl there may still hold the run's lock while it records sbatch's
# answer; this one waits for it.)
submit_here >out2 2>err2 || fail "the second submit --on failed: $(cat out2 err2)"
grep -qF "already submitted: job $id of run" out2 || fail "the second submit --on is not 'already submitted: job $id': $(cat out2 err2)"
grep -qF "through a new ssh connection" err2 || fail "the second submit did not open a new connection: $(cat err2)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "more than one job: $(job_ids | tr '\n' ' ')$(jobs_report)"
