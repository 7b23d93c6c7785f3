#!/usr/bin/env bash
# Sourced by the tests of one run raced across two sites (docs/race.md
# "Across sites"), after lib.sh and remote_lib.sh: the test's own local
# cluster (site b; the tests: 22.05) and 24.11 (site a, which the test holds
# by its `# resource locks: local_slurm_2411`), each reached over ssh through its
# own login host from this host, the user's machine. Sets site_a and site_b
# (each site's folder there), writes job.yaml in $proj (the user's folder
# here, the current folder) and gives
#   on_other CMD...   CMD on 24.11's login host
#   run_here ARGS...  ddpctl here ($T/rout, $T/rerr, $rcode)
#   race_once ARGS... submit the race ($spec_file, default job.yaml, with
#                     ARGS; $gate: --gate-timeout, default 120) and wait for its coordinator to end it:
#                     $race, $trained
#   submit_race ARGS... the submission alone, wait_race_over the wait
other_state=/tmp/ddpctl-local-slurm-24.11
on_other() { DDPCTL_SLURM_STATE=$other_state "$LOCAL_SLURM" --slurm 24.11 exec -- "$@"; }
on_other scontrol ping >/dev/null 2>&1 || fail "the local Slurm 24.11 cluster is not up (scripts/test brings all three up)"
cluster_has_this_ddpctl
ln -sfn "$DDPCTL" "$other_state/user-bin/ddpctl"
at_exit "rm -f '$other_state/user-bin/ddpctl'"
user_machine
DDPCTL_SLURM_STATE=$other_state "$LOCAL_SLURM" --slurm 24.11 ssh-config >>"$HOME/.ssh/config"
# remote_lib.sh sets host (the test's own login host) and control.
: "${host:?}" "${control:?}"
at_exit "ssh -F '$HOME/.ssh/config' -o ControlPath='$control' -O exit login-24.11"
# Site a is 24.11, site b the test's own; each runs in its own folder there.
site_a=$T/site-a site_b=$T/site-b
at_exit "on_other scancel \$(cat '$site_a'/runs/*/race/jobs/* 2>/dev/null) 2>/dev/null"
at_exit "for p in '$T'/runs/*/coordinator.pid; do kill \$(cat \"\$p\") 2>/dev/null; done"
proj=$HOME/proj
mkdir -p "$proj"
cd "$proj"
write_spec job.yaml <<YAML
on: $host
remote_dir: $site_b
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: 'echo TRAINED | tee "\$PWD/trained.\$SLURM_JOB_ID"; echo "{\"epoch\": 1, \"epochs\": 1, \"img_per_s\": 10.0, \"epoch_s\": 1.0}" >>"\$DDPCTL_METRICS_FILE"'
alternatives:
  - {on: login-24.11, remote_dir: $site_a, label: a}
YAML
export DDPCTL_RUNS=$proj/runs

# race_once: submits the race, waits for its coordinator to end it (at most
# 3 minutes), and sets $race (its folder here) and $trained (the jobs that
# trained at either site).
race_once() {
  submit_race "$@"
  wait_race_over
}
# submit_race ARGS...: the submission alone; sets $race.
submit_race() {
  run_here submit "${spec_file:-job.yaml}" --no-snapshot --gate-timeout "${gate:-120}" "$@"
  [ "$rcode" -eq 0 ] || fail "submit across sites ended with $rcode: $(cat "$T/rout" "$T/rerr")"
  echo "submit: $(cat "$T/rout" "$T/rerr")"
  race=$DDPCTL_RUNS/$(sed -n 's/^race \([^ ]*\) across .*/\1/p' "$T/rout")
  [ -f "$race/sites.json" ] || fail "submit named no race here ($race): $(cat "$T/rout" "$T/rerr")"
}
wait_race_over() {
  local deadline=$((SECONDS + 180)) since=$SECONDS
  until [ -f "$race/coordinator.done" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "the coordinator did not end the race within 3 minutes:"$'\n'"$(cat "$race/coordinator.log")"$'\n'"site a: $(on_other squeue -h -o '%i %T %r' 2>&1)"$'\n'"site b: $(on_login squeue -h -o '%i %T %r' 2>&1)"
    pause_since "$since"
  done
  echo "coordinator: $(cat "$race/coordinator.log")"
  # shellcheck disable=SC2034  # read by the tests
  trained=$(cd "$T" && find site-a site-b -maxdepth 1 -name 'trained.*' | sort | tr '\n' ' ')
}
run_here() {
  set +e
  "$DDPCTL" "$@" >"$T/rout" 2>"$T/rerr"
  rcode=$?
  set -e
}

