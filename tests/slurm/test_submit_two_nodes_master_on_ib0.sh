#!/usr/bin/env bash
# A 2-node job: each node has its own hostname, MASTER_ADDR is the first
# node's ib0 address, and the second node really reaches it there.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >rendezvous.py <<'PY'
import os, socket, time
rank = int(os.environ["NODE_RANK"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
print("node", rank, "host", socket.gethostname(), "master", addr, flush=True)
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    s.settimeout(120)
    c, _ = s.accept()
    print("rank 0 heard:", c.recv(100).decode(), flush=True)
else:
    deadline = time.monotonic() + 120
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=2)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                raise SystemExit(f"node 1: cannot reach rank 0 at {addr}:{port} within 120 s: {e}")
            time.sleep(0.2)
    c.sendall(("hello from " + socket.gethostname()).encode())
PY
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: [python3, $T/rendezvous.py]
YAML
run submit job.yaml --follow
expect_code 0
expect_out "COMPLETED"
dir=$(only_run_dir)
run logs "$(basename "$dir")"
expect_code 0
expect_out "node 0 host "
run logs "$(basename "$dir")" --rank 1
expect_out "node 1 host "
log0=$(cat logs/"$JOB_NAME"_*.restart0.0.out)
log1=$(cat logs/"$JOB_NAME"_*.restart0.1.out)
host0=$(sed -n 's/^node 0 host \([^ ]*\) .*/\1/p' <<<"$log0")
host1=$(sed -n 's/^node 1 host \([^ ]*\) .*/\1/p' <<<"$log1")
if [ -z "$host0" ] || [ "$host0" = "$host1" ]; then fail "hostnames not distinct: '$host0' '$host1'"; fi
master=$(sed -n 's/.* master \(.*\)/\1/p' <<<"$log0")
ib0=$(on_login getent ahostsv4 "$host0" | awk 'NR == 1 { print $1 }')
[ "$master" = "$ib0" ] || fail "MASTER_ADDR $master is not $host0's ib0 address $ib0"
case "$master" in 127.*) fail "master on loopback: $master" ;; esac
grep -q "rank 0 heard: hello from $host1" <<<"$log0" || fail "rank 0 was not reached: $log0"
