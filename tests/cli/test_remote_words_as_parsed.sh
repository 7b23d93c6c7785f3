#!/usr/bin/env bash
# --on HOST: the words the ddpctl there runs are the user's as this one
# parsed them, less exactly the --on it took (`logs sw --cell --on --on h`:
# --cell's value is the word --on); report --plot brings back the file the
# parser took; a spec named -n.yaml stays a file there;
# `--on ''` (an unset $HOST) is an error, never the command run here; a home
# with a blank and a % reaches ssh as its config needs it; DDPCTL_SSH_COMMAND
# with quotes runs as sh reads it.
#
# The login host is this machine: the ssh below has OpenSSH check its
# options (ssh -G: it connects nowhere), says a master is open for ddpctl's
# ControlPath, and runs the command line after `--` here with sh. The ddpctl
# there is a script that says this version and writes down its words.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
command -v ssh >/dev/null || fail "OpenSSH's ssh is needed (scripts/setup installs it)"
version=$("$DDPCTL" --version)
mkdir -p "$T/stub dir" "$T/there" "$T/here"
cat >"$T/stub dir/ssh" <<'SH'
#!/bin/sh
printf '%s\n' "$*" >>"$SSH_LOG"
ssh -F /dev/null -G "$@" >/dev/null 2>"$SSH_LOG.err" || { cat "$SSH_LOG.err" >&2; exit 255; }
case "$*" in *' -O check '*) case "$*" in *ControlPath=*) exit 0 ;; *) exit 255 ;; esac ;; esac
while [ "$1" != -- ]; do shift; done
exec sh -c "$2"
SH
cat >"$T/there/ddpctl" <<SH
#!/bin/sh
if [ "\$1" = --version ]; then echo '$version'; exit 0; fi
printf '%s\n' "\$@" >"$T/words"
SH
# What must not run here: the Slurm commands of a local cancel.
for c in squeue sacct scancel; do
  cat >"$T/here/$c" <<SH
#!/bin/sh
echo "\$0 \$*" >>"$T/here.log"
SH
done
chmod +x "$T/stub dir/ssh" "$T/there/ddpctl" "$T"/here/*
# A folder with a blank: DDPCTL_SSH_COMMAND names the ssh in quotes, as sh reads them.
export SSH_LOG="$T/ssh.log" PATH="$T/there:$T/here:$PATH" DDPCTL_SSH_COMMAND="\"$T/stub dir/ssh\""
mkdir -p "$HOME/proj"
cd "$HOME/proj"

words() { tr '\n' ' ' <"$T/words"; }

run logs sw --cell --on --on h
expect_code 0
[ "$(words)" = "logs sw --cell --on " ] || fail "the words there: $(words)"

run cancel 4242 --on=h --remote-dir proj --cell --on
expect_code 0
[ "$(words)" = "cancel 4242 --cell --on " ] || fail "the words there: $(words)"

printf 'name: n\n' >./-n.yaml
run submit ./-n.yaml --on h --dry-run
expect_code 0
[ "$(words)" = "submit ./-n.yaml --dry-run " ] || fail "the words there: $(words)"

# report --plot FILE brings back the FILE the parser took (--x's value here
# is the word --plot), not the word after the first --plot.
printf 'svg\n' >f.svg
run report r1 --x --plot --plot f.svg --on h
expect_code 0
[ "$(words)" = "report r1 --x --plot --plot f.svg " ] || fail "the words there: $(words)"
expect_err "; brought f.svg back: 3 ssh call(s)"

rm -f "$T/words" "$SSH_LOG"
run cancel 4242 --on ''
expect_code 1
expect_err "ddpctl: error: --on: '' is not a host to ssh to (an empty --on is no host"
[ ! -e "$T/here.log" ] || fail "ran here: $(cat "$T/here.log")"
[ ! -e "$SSH_LOG" ] || fail "ran ssh: $(cat "$SSH_LOG")"
run cancel 4242 --on ' '
expect_code 1
expect_err "ddpctl: error: --on: ' ' is not a host to ssh to"
[ ! -e "$T/here.log" ] || fail "ran here: $(cat "$T/here.log")"
for cmd in "doctor" "fetch r" "status" "report r" "logs r"; do
  # shellcheck disable=SC2086
  run $cmd --on ''
  expect_code 1
  expect_err "ddpctl: error: --on: '' is not a host to ssh to"
done
[ ! -e "$T/here.log" ] || fail "ran here: $(cat "$T/here.log")"
[ ! -e "$SSH_LOG" ] || fail "ran ssh: $(cat "$SSH_LOG")"

# A home with a blank and a %: ssh's config reads the ControlPath whole.
export HOME="$T/my home%d"
mkdir -p "$HOME/proj"
cd "$HOME/proj"
run logs sw --on h
expect_code 0
[ "$(words)" = "logs sw " ] || fail "the words there: $(words)"
grep -qF -- "-o ControlPath=\"$T/my home%%d/.ssh/ddpctl-%C\" -o" "$SSH_LOG" || fail "ssh got: $(cat "$SSH_LOG")"
echo ok
