#!/usr/bin/env bash
# Sourced by the tests of who hung a job (test_watchdog_culprit_*.sh and
# test_watchdog_names_culprit_by_faulthandler.sh), after lib.sh: a hung
# torch job on the local cluster, cancelled by the watchdog, and what its
# stall record says (docs/running.md "Who hung the job").

# need_node_torch: skips where the nodes' Python cannot import torch. Asked
# on a node: the login host's Python is not the nodes' (24.11's and 26.05's
# nodes run in their chroots).
need_node_torch() {
  on_login srun -N 1 -n 1 -p cpu -t 1 -J "$JOB_NAME-probe" /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 ||
    skip "the nodes' /usr/bin/python3 cannot import torch (python3-torch)"
}

# need_node_torchrun: skips where torchrun cannot rendezvous two nodes on
# the nodes' torch. Debian builds torch >= 2.4 without libuv (trixie's 2.6,
# forky's 2.14), and while USE_LIBUV=0 reaches init_process_group's store,
# torchrun's rendezvous and its workers' agent-store clients create their
# TCPStore with the binding's default, libuv: the torchrun tests put
# data/libuv_off (a usercustomize that makes every TCPStore a plain one) on
# the job's PYTHONPATH, as $LIBUV_OFF. A TCPStore with torch's defaults,
# under it, is the probe.
LIBUV_OFF=$DDPCTL_SOURCE/tests/slurm/data/libuv_off
need_node_torchrun() {
  local out
  out=$(on_login srun -N 1 -n 1 -p cpu -t 1 -J "$JOB_NAME-probe" env USE_LIBUV=0 PYTHONPATH="$LIBUV_OFF" /usr/bin/python3 -c \
    'import datetime, torch.distributed as d; d.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10))' 2>&1) ||
    skip "torchrun cannot run on the nodes' torch: its rendezvous store fails with torch's defaults: $(grep -m1 -i libuv <<<"$out" || tail -n 1 <<<"$out")"
}

# need_node_gdb: fails where the nodes have torch but no gdb
# (scripts/local-slurm puts gdb beside python3-torch on every version's nodes).
need_node_gdb() {
  local says
  says=$(on_login srun -N 1 -n 1 -p cpu -t 1 -J "$JOB_NAME-probe" gdb --version 2>&1) ||
    fail "the nodes have python3-torch but no usable gdb (scripts/local-slurm installs it): ${says%%$'\n'*}"
}

# hide_stack_tools: gdb and py-spy unusable on the nodes: fakes first on PATH
# (the job inherits it: sbatch's default --export=ALL) that say "not found"
# and record each call in $T/tools-called.
hide_stack_tools() {
  local tool
  # shellcheck disable=SC2016  # expanded when the fakes run
  for tool in gdb py-spy; do fake_command "$tool" 'echo "$0 $*" >>"'"$T"'/tools-called"; echo "${0##*/}: not found" >&2; exit 127'; done
}

# expect_tools_unused: the fakes were found (asked --version) and never used.
expect_tools_unused() {
  [ ! -e "$T/tools-called" ] || ! grep -qv -- '--version' "$T/tools-called" ||
    fail "gdb or py-spy was run on a rank: $(cat "$T/tools-called")"
}

# wait_for_culprit ID: waits until job ID is CANCELLED by its watchdog (the
# stall, then up to the stacks' budget, DDPCTL_STACKS_BUDGET or 20 s); sets
# $record (its stall record), $culprit and $stacks_of (the stacks files and
# the batch log, for failures), and prints what the record says.
wait_for_culprit() {
  local id=$1 budget=${DDPCTL_STACKS_BUDGET:-20}
  wait_for_sacct "$id" CANCELLED $((220 + budget))
  record="logs/${JOB_NAME}_$id.stall.json"
  [ -s "$record" ] || fail "the watchdog left no record ($record): $(ls logs)"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"
  culprit=$(stall_field culprit)
  echo "culprit: $culprit"
  echo "stacks taken by: $(stall_field stacks_by)"
  stacks_of=$(tail -n +1 logs/"${JOB_NAME}_$id".restart0.stacks.*.txt "logs/${JOB_NAME}_$id.err" 2>&1 || true)
  [ "$(stall_field culprit_named)" = True ] || fail "no culprit named: $culprit"$'\n'"$stacks_of"
}

# stall_field NAME: a field of $record.
stall_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$record" "$1"; }

# stacks_by_ranks: the rank numbers $record's stacks_by names, in all its
# groups ("faulthandler and gdb: ranks 0, 1, 2 (g1, g2); faulthandler: rank 3
# (g2)" gives "0 1 2 3"), sorted, repeats kept; a process named by its task
# only gives "task N".
stacks_by_ranks() {
  stall_field stacks_by | python3 -c '
import re, sys
ids = []
for part in sys.stdin.read().strip().split("; "):
    who = re.sub(r" \([^)]*\)$", "", part.split(": ", 1)[-1])
    for kind, numbers in re.findall(r"\b(ranks?|tasks?) ([0-9, ]+)", who):
        for n in numbers.replace(",", " ").split():
            ids.append((kind.startswith("task"), int(n)))
print(" ".join(("task %d" if task else "%d") % n for task, n in sorted(ids)))'
}

# line_of FILE TEXT: the number of FILE's (one) line holding TEXT.
line_of() {
  local n
  n=$(grep -nF -- "$2" "$1" | cut -d: -f1)
  if [ -z "$n" ] || [ "$n" != "${n%%$'\n'*}" ]; then fail "not one line of $1 holds: $2"; fi
  echo "$n"
}

# expect_culprit ERE: $culprit matches the extended regular expression.
expect_culprit() {
  grep -qE -- "$1" <<<"$culprit" ||
    fail "the culprit is not as expected"$'\n'"  expected: $1"$'\n'"  got:      $culprit"$'\n'"$stacks_of"
}

# expect_sections ID HOW N: every node's stacks file of job ID has N rank
# sections headed as taken by HOW (faulthandler, gdb), on ranks 0-3.
expect_sections() {
  local id=$1 how=$2 want=$3 got=0 stacks pattern
  case "$how" in
    faulthandler) pattern='^## pid [0-9]+ \(rank [0-3]\), state .: faulthandler \(signal [0-9]+\)$' ;;
    gdb) pattern="^## pid [0-9]+ \(rank [0-3]\), state .: gdb -p [0-9]+ -batch -nx -ex 'thread apply all bt'$" ;;
    *) fail "expect_sections: no way $how" ;;
  esac
  for stacks in logs/"${JOB_NAME}_$id".restart0.stacks.*.txt; do
    got=$((got + $(grep -cE "$pattern" "$stacks" || true)))
  done
  [ "$got" -eq "$want" ] ||
    fail "$got rank section(s) taken by $how, not $want: $(cat logs/"${JOB_NAME}_$id".restart0.stacks.*.txt)"
}

# expect_status_culprit TEXT: status explains the ending by the stall and TEXT.
expect_status_culprit() {
  run status "$JOB_NAME"
  echo "status: $(cat "$T/out")"
  expect_out "was cancelled by the watchdog: stalled"
  expect_out "$1"
}
