#!/usr/bin/env bash
# The sitecustomize `ddpctl job python-hook` writes (first on a job's
# PYTHONPATH) changes nothing a program sees: the same output and exit
# status, no file; a program that sets its own handler for the signal gets
# it; a signal ignored from the start is left alone; Debian's and the user's
# sitecustomize still run. And `ddpctl job stacks` gets a hung rank's stacks
# from faulthandler alone, with gdb and py-spy not there (fakes that record
# being called), leaving the rank running; a forked child (a DataLoader
# worker) answers for itself into a file of its own and is listed as its
# rank's child; with gdb on the node (a fake that answers), the rank's
# native frames are taken besides its own Python ones, the child's are not.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -c 'import os, faulthandler; os.memfd_create' 2>/dev/null || { echo "skipped: $PY has no os.memfd_create"; exit 77; }
mkdir -p logs
hook=$("$DDPCTL" job python-hook --log-base "$T/logs/job_7")
[ "$hook" = "$T/logs/job_7.python" ] || fail "the hook's folder is $hook"
sig=$(sed -n 's/^    _ddpctl_stacks_hook(\([0-9]*\))$/\1/p' "$hook/sitecustomize.py")
[ -n "$sig" ] || fail "no signal in the hook: $(cat "$hook/sitecustomize.py")"
# How many of a process's open files are the hook's memfd.
cat >count.py <<'EOF'
import os
def hook_fds():
    return sum("ddpctl-stacks" in os.readlink("/proc/self/fd/" + f) for f in os.listdir("/proc/self/fd")
               if os.path.islink("/proc/self/fd/" + f))
EOF

# 1. The same output and exit status, no file written.
cat >plain.py <<'EOF'
import sys, count
print("to stdout", sys.argv[1:])
print("to stderr", file=sys.stderr)
print("hook fds:", count.hook_fds())
sys.exit(3)
EOF
set +e
PYTHONPATH=$T "$PY" plain.py a b >without.out 2>without.err; rc_without=$?
before=$(find "$T" | sort)
PYTHONPATH=$hook:$T "$PY" plain.py a b >with.out 2>with.err; rc_with=$?
after=$(find "$T" | sort)
set -e
{ [ "$rc_without" = 3 ] && [ "$rc_with" = 3 ]; } || fail "exit status $rc_with with the hook, $rc_without without"
grep -qx "hook fds: 1" with.out || fail "the hook did not register (the test would prove nothing): $(cat with.out with.err)"
diff <(grep -v "hook fds" without.out) <(grep -v "hook fds" with.out) || fail "stdout differs with the hook"
diff without.err with.err || fail "stderr differs with the hook"
[ "$before" = "$(grep -v '/with\.\(out\|err\)$' <<<"$after")" ] || fail "the hook left files: $(diff <(echo "$before") <(echo "$after"))"

# 2. A program that sets its own handler for the signal keeps it; the hook steps aside.
cat >own.py <<EOF
import os, signal, count
print("before:", count.hook_fds())
signal.signal($sig, lambda s, f: print("own handler ran"))
os.kill(os.getpid(), $sig)
print("after:", count.hook_fds())
EOF
out=$(PYTHONPATH=$hook:$T "$PY" own.py 2>&1)
[ "$out" = $'before: 1\nown handler ran\nafter: 0' ] || fail "own handler: $out"

# 3. A signal the process ignores from its start is left alone.
out=$(PYTHONPATH=$hook:$T bash -c "trap '' $sig; exec $PY -c 'import signal, count; print(count.hook_fds(), signal.getsignal($sig) == signal.SIG_IGN)'" 2>&1)
[ "$out" = "0 True" ] || fail "an ignored signal: $out"

# 4. The sitecustomize that would have run without the hook runs (the user's here).
mkdir user
echo 'import sys; print("user sitecustomize ran", file=sys.stderr)' >user/sitecustomize.py
out=$(PYTHONPATH=$hook:$T/user:$T "$PY" -c 'import sitecustomize, count; print(sitecustomize.__file__, count.hook_fds())' 2>&1)
[ "$out" = $'user sitecustomize ran\n'"$T/user/sitecustomize.py 1" ] || fail "chained sitecustomize: $out"

# 5. ddpctl job stacks: the hung rank's stacks by faulthandler, no tool called.
mkdir bin
for tool in gdb py-spy; do
  printf '#!/bin/sh\necho "%s $*" >>%q/tools-called\necho "%s: not found" >&2\nexit 127\n' "$tool" "$T" "$tool" >"bin/$tool"
  chmod +x "bin/$tool"
done
cat >hang.py <<'EOF'
import sys, time
def stuck():
    open(sys.argv[1], "w").close()
    time.sleep(600)
stuck()
EOF
env SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 SLURM_PROCID=1 RANK=1 DDPCTL_TRAINING=1 PYTHONPATH="$hook" \
  "$PY" hang.py "$T/ready" >hang.out 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; keep_on_failure' EXIT
deadline=$((SECONDS + 60))
until [ -e ready ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "hang.py never started: $(cat hang.out)"
  kill -0 "$pid" || fail "hang.py ended: $(cat hang.out)"
  sleep 0.1
done
PATH="$T/bin:$PATH" SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 run job stacks --log-base "$T/logs/job_7"
expect_code 0
stacks=$T/logs/job_7.restart0.stacks.n1.txt
expect_out "$stacks"
grep -qF "## pid $pid (rank 1), state S: faulthandler (signal $sig)" "$stacks" || fail "no faulthandler heading: $(cat "$stacks")"
grep -qF "File \"$T/hang.py\", line 4 in stuck" "$stacks" || fail "no frame of stuck(): $(cat "$stacks")"
# Asked whether they are there (--version), and nothing more.
[ ! -e tools-called ] || ! grep -qv -- '--version' tools-called || fail "gdb or py-spy was called: $(cat tools-called)"
kill -0 "$pid" || fail "the rank did not survive its dump: $(cat hang.out)"
[ ! -s hang.out ] || fail "the rank printed: $(cat hang.out)"
kill "$pid"

# 6. A forked child answers for itself; with gdb there, a rank is taken both ways.
cat >fork.py <<'EOF'
import os, sys, time, count
def in_worker():
    print("child hook fds:", count.hook_fds(), flush=True)
    open(sys.argv[1] + ".child", "w").close()
    time.sleep(600)
def in_rank():
    if os.fork() == 0:
        in_worker()
    open(sys.argv[1], "w").close()
    time.sleep(600)
in_rank()
EOF
rm -f tools-called "$stacks"
cat >bin/gdb <<EOF
#!/bin/sh
echo "gdb \$*" >>$T/tools-called
[ "\$1" = --version ] && { echo "GNU gdb (fake)"; exit 0; }
echo "Thread 1 (Thread 0x1 (LWP \$2) \"python3\"):"
echo "#0  0x00007f0dfac1c26f in clock_nanosleep () from /lib/libc.so.6"
EOF
env SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 SLURM_PROCID=1 RANK=1 DDPCTL_TRAINING=1 PYTHONPATH="$hook:$T" \
  "$PY" fork.py "$T/ready2" >fork.out 2>&1 &
pid=$!
child=
trap 'kill $pid $child 2>/dev/null || true; keep_on_failure' EXIT
deadline=$((SECONDS + 60))
until [ -e ready2 ] && [ -e ready2.child ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "fork.py never started: $(cat fork.out)"
  kill -0 "$pid" || fail "fork.py ended: $(cat fork.out)"
  sleep 0.1
done
child=$(pgrep -P "$pid")
[ -n "$child" ] || fail "no child of $pid"
grep -qx "child hook fds: 1" fork.out || fail "the child holds no hook of its own: $(cat fork.out)"
PATH="$T/bin:$PATH" SLURM_JOB_ID=fake77 SLURMD_NODENAME=n1 run job stacks --log-base "$T/logs/job_7"
expect_code 0
# section PID REST: the lines under the heading "## pid PID REST".
section() { awk -v h="## pid $1 $2" 'index($0, h) == 1 { on = 1; next } /^## / { on = 0 } on' "$stacks"; }
section "$pid" "(rank 1), state S: faulthandler (signal $sig)" | grep -qF "line 10 in in_rank" ||
  fail "no faulthandler dump of the rank in in_rank(): $(cat "$stacks")"
section "$child" "(rank 1, child of pid $pid), state S: faulthandler (signal $sig)" | grep -qF "line 5 in in_worker" ||
  fail "no faulthandler dump of the child in in_worker(): $(cat "$stacks")"
if section "$child" "(rank 1, child of pid $pid)" | grep -qF "line 10 in in_rank"; then
  fail "the child's dump holds the rank's: $(cat "$stacks")"
fi
section "$pid" "(rank 1), state S: gdb -p $pid -batch -nx -ex 'thread apply all bt'" | grep -qF "in clock_nanosleep ()" ||
  fail "no gdb section for the rank: $(cat "$stacks")"
grep -qxF "gdb -p $pid -batch -nx -ex thread apply all bt" tools-called || fail "gdb was not asked for the rank: $(cat tools-called)"
if grep -qF "gdb -p $child " tools-called; then fail "gdb was run on the child that answered itself: $(cat tools-called)"; fi
echo ok
