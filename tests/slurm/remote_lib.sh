#!/usr/bin/env bash
# Sourced by the tests of ddpctl run from the user's own machine (this host,
# outside the cluster's namespaces) with --on login-V, after lib.sh:
#   user_machine   the user's ssh config (scripts/local-slurm ssh-config: a
#                  Host with a ProxyCommand hop and their key) under $HOME,
#                  given to ddpctl as DDPCTL_SSH_COMMAND, and ddpctl's ssh
#                  master closed when the test ends
#   mfa_host       a Host that asks for a code at login (below)
#   cluster_has_this_ddpctl
#                  the login host gets this version as a cluster that
#                  installed it (a ddpctl first on its ssh sessions' PATH)
# Sets host (login-V), state (the cluster's state folder) and control
# (ddpctl's ControlPath).
host=login-$SLURM_VERSION
state=${DDPCTL_SLURM_STATE:-/tmp/ddpctl-local-slurm}
control="$HOME/.ssh/ddpctl-%C"
[ -d "$state/user-bin" ] || fail "the local cluster has no $state/user-bin on its ssh sessions' PATH: run scripts/local-slurm$([ "$SLURM_VERSION" = 22.05 ] || echo " --slurm $SLURM_VERSION") down and up"
user_machine() {
  mkdir -p "$HOME/.ssh"
  chmod 700 "$HOME/.ssh"
  "$LOCAL_SLURM" ssh-config >"$HOME/.ssh/config"
  export DDPCTL_SSH_COMMAND="ssh -F $HOME/.ssh/config"
  at_exit "ssh -F '$HOME/.ssh/config' -o ControlPath='$control' -O exit $host"
}
# mfa_host: Host $host-mfa in the user's config, the same login host as a
# user (nobody) to whom it offers only keyboard-interactive, as a site that
# asks for a code at every login.
mfa_host() {
  sed -e "s/^Host $host\$/Host $host-mfa/" -e "s/^  User .*/  User nobody/" "$HOME/.ssh/config" >"$T/mfa.config"
  cat "$T/mfa.config" >>"$HOME/.ssh/config"
}
cluster_has_this_ddpctl() {
  ln -sfn "$DDPCTL" "$state/user-bin/ddpctl"
  at_exit "rm -f '$state/user-bin/ddpctl'"
}
