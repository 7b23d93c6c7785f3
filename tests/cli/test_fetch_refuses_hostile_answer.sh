#!/usr/bin/env bash
# fetch --on HOST takes what the login host sends as data: a run asked for,
# as files and folders, or nothing. A fake ssh (DDPCTL_SSH_COMMAND) answers
# with a prepared tar; what it holds beyond the run, or in place of it, is
# refused by name, and this folder's runs stay as they were.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p there/r1 runs/victim
echo '{}' >there/r1/run.json
echo mine >runs/victim/run.json
cat >ssh <<'SH'
#!/bin/sh
case " $* " in *" -O "*) exit 0 ;; esac
# fetch's answer: its size first, then the tar.
echo "ddpctl-fetch $(wc -c <"$0.answer")"
exec cat "$0.answer"
SH
chmod +x ssh
export DDPCTL_SSH_COMMAND="$T/ssh"

# Another run here, and a link out of the run.
mkdir -p there/victim
echo theirs >there/victim/run.json
ln -s /etc/passwd there/r1/log
tar -C there -cf ssh.answer r1 victim
run fetch r1 --on login --remote-dir proj
expect_code 1
expect_err "ddpctl: error: --on: login sent what fetch does not take"
expect_err "so nothing was replaced here:"
expect_err "  'victim/run.json': not in a run asked for ('r1')"
expect_err "  'r1/log': a symbolic link to '/etc/passwd'"
[ "$(cat runs/victim/run.json)" = mine ] || fail "fetch replaced this folder's run victim"
[ ! -e runs/r1 ] || fail "fetch took a run from a refused answer"

# The run a plain file, with a terminal escape in a name: refused, not an
# internal error, and nothing of fetch's own left in runs/.
escaped=r1$'\e'[2J
rm -rf there && mkdir there && echo x >there/r1 && echo x >"there/$escaped"
tar -C there -cf ssh.answer r1 "$escaped"
run fetch r1 --on login --remote-dir proj
expect_code 1
expect_err "  'r1': a file, not a run's folder"
expect_err "  'r1\\u{001b}[2J': a name with a control character"
if grep -q $'\e' "$T/err"; then fail "fetch printed a name's escape raw"; fi
for left in runs/* runs/.[!.]*; do
  [ ! -e "$left" ] || [ "$left" = runs/victim ] || fail "fetch left $left in runs/"
done

# A sound answer comes, marked.
rm -rf there && mkdir -p there/r1 && echo '{}' >there/r1/run.json
tar -C there -cf ssh.answer r1
run fetch r1 --on login --remote-dir proj
expect_code 0
expect_out "fetched r1 from login: 1 files"
[ -f runs/r1/.fetched ] || fail "the fetched run is not marked"
echo ok
