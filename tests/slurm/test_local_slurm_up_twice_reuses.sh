#!/usr/bin/env bash
# A second `local-slurm up` while the cluster runs reuses it: the controller
# keeps its pid (a second slurmctld would kill the first).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
state=${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}
before=$(cat "$state/run/slurmctld.pid")
# Another version's cluster may run beside this one: count, do not expect one.
controllers=$(pgrep -c -x slurmctld || true)
"$LOCAL_SLURM" up >"$T/out" 2>&1 || fail "second up failed: $(cat "$T/out")"
expect_out "already running"
[ "$(cat "$state/run/slurmctld.pid")" = "$before" ] || fail "slurmctld was restarted"
[ "$(pgrep -c -x slurmctld || true)" -eq "$controllers" ] || fail "a second slurmctld was started: $(pgrep -a -x slurmctld)"
