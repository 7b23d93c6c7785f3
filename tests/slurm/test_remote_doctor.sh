#!/usr/bin/env bash
# From the user's own machine (this host, outside the cluster's namespaces),
# `ddpctl doctor --on login-V` probes the cluster's Slurm through the user's
# own ssh and ~/.ssh/config (a Host with a ProxyCommand hop, their key): it
# opens one connection of its own that stays (ControlPersist), a second
# doctor uses it, and the draft is the one doctor writes on the login node.
# A host that would ask for anything (here: a user to whom the login host
# offers only keyboard-interactive, as a site with MFA does) fails at once
# with the one ssh command that opens the connection.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
host=login-$SLURM_VERSION
# The draft the login node's doctor writes, to compare with.
run doctor -o on-login.yaml --name site
expect_code 0
# The user's home and ssh config. OpenSSH reads ~/.ssh from the password
# database, not $HOME: the config is given as users with a second one do,
# through DDPCTL_SSH_COMMAND (as GIT_SSH_COMMAND).
export HOME=$T/home
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME/.ssh"
"$LOCAL_SLURM" ssh-config >"$HOME/.ssh/config"
export DDPCTL_SSH_COMMAND="ssh -F $HOME/.ssh/config"
control=$HOME/.ssh/ddpctl-%C
user_ssh() { ssh -F "$HOME/.ssh/config" "$@"; }
# ddpctl's connection goes when the test ends, whatever happens.
at_exit "ssh -F '$HOME/.ssh/config' -o ControlPath='$control' -O exit $host"
user_ssh -o ControlPath="$control" -O check "$host" 2>/dev/null && fail "a connection to $host is open before ddpctl ran"

"$DDPCTL" doctor --on "$host" -o remote.yaml --name site 2>err || fail "doctor --on $host failed: $(cat err)"
cat err
grep -qF "ddpctl: asked $host through a new ssh connection to $host, kept open 10 minutes" err ||
  fail "doctor does not say how it reached $host: $(cat err)"
user_ssh -o ControlPath="$control" -O check "$host" 2>/dev/null || fail "ddpctl's connection to $host did not stay open"
# Which ddpctl the cluster side would run, asked in the same connection: the
# login host's when it is this version; none is on its PATH in this test's
# cluster (nor on CI's), so this version's portable build would be needed
# under the remote user's home.
version=$("$DDPCTL" --version)
folder=$(sed -e 's/^ddpctl //' -e 's/ (git /-/' -e 's/)$//' <<<"$version")
# shellcheck disable=SC2016  # expanded by the remote shell
remote_home=$(user_ssh -o ControlPath="$control" "$host" 'echo $HOME')
if user_ssh -o ControlPath="$control" "$host" 'command -v ddpctl' >/dev/null 2>&1; then
  echo "note: the login host has a ddpctl on its PATH: $(user_ssh -o ControlPath="$control" "$host" 'command -v ddpctl; ddpctl --version' 2>&1)"
  grep -qE "^ddpctl: ddpctl on $host: " err || fail "doctor does not say which ddpctl $host has: $(cat err)"
else
  grep -qxF "ddpctl: ddpctl on $host: none of this version (no ddpctl on the PATH): jobs submitted from here need this version's portable build at $remote_home/.local/share/ddpctl/$folder/bin/ddpctl" err ||
    fail "doctor does not say the cluster side lacks this version ($version): $(cat err)"
fi
# The same draft as on the login node, but for when each was made.
diff <(grep -v '^# Cluster profile drafted' on-login.yaml) <(grep -v '^# Cluster profile drafted' remote.yaml) ||
  fail "the draft made through ssh differs from the login node's"
grep -q "a100-80gb: {nodes: 2, gpus_per_node: 4" remote.yaml || fail "the draft lacks a100-80gb: $(cat remote.yaml)"

# The next command reuses it.
"$DDPCTL" doctor --on "$host" -o remote2.yaml --name site 2>err2 || fail "the second doctor --on failed: $(cat err2)"
grep -qF "ddpctl: asked $host through ddpctl's open ssh connection to $host" err2 ||
  fail "the second doctor did not use ddpctl's open connection: $(cat err2)"

# A login host that would prompt: ddpctl stops at once, printing the command.
ssh-keygen -q -t ed25519 -N '' -f "$HOME/.ssh/other_key"
# Another user of the same host: ssh's %C in the ControlPath tells their
# connections apart (host, port and user), so the open one is not theirs.
sed -e "s/^Host $host\$/Host $host-prompts/" -e "s|IdentityFile .*|IdentityFile $HOME/.ssh/other_key|" \
  -e "s/^  User .*/  User nobody/" "$HOME/.ssh/config" >prompts.config
cat prompts.config >>"$HOME/.ssh/config"
started=$(date +%s%N)
set +e
timeout 60 "$DDPCTL" doctor --on "$host-prompts" </dev/null >/dev/null 2>err3
code=$?
set -e
took_ms=$((($(date +%s%N) - started) / 1000000))
echo "a host that would prompt: ddpctl ended with $code after $took_ms ms: $(cat err3)"
[ "$code" -eq 1 ] || fail "doctor --on $host-prompts ended with $code, not 1 (a clear error): $(cat err3)"
grep -qF "cannot reach $host-prompts through ssh without a prompt" err3 || fail "no clear error: $(cat err3)"
grep -qF "Permission denied (keyboard-interactive)" err3 ||
  fail "the error does not say what ssh said (keyboard-interactive only; a cluster brought up before scripts/local-slurm offered it must be taken down and up): $(cat err3)"
grep -qF "ssh -F $HOME/.ssh/config -o ControlMaster=yes -o ControlPath=$control -o ControlPersist=yes -fN $host-prompts" err3 ||
  fail "the error does not print the command that opens the connection: $(cat err3)"
