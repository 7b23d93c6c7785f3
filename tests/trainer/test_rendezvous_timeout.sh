#!/usr/bin/env bash
# A rank that never arrives: rendezvous fails within --rendezvous-timeout and
# says where and how many ranks of how many arrived. A rank with no server to
# reach says so too.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
begin=$(date +%s)
RANK=0 WORLD_SIZE=2 train rank0 --model smallcnn --rendezvous-timeout 3
took=$(($(date +%s) - begin))
expect_code 1 rank0
expect_in rank0 "ddp-train: error: rendezvous at 127.0.0.1:$MASTER_PORT timed out after 3 s: 1 of 2 ranks arrived"
# 3 s plus start-up, with room for a loaded 2-core machine; far below the
# 300 s default that an ignored --rendezvous-timeout would wait.
[ "$took" -le 30 ] || fail "rendezvous took $took s to time out (limit 3 s)"

# The launcher names the rank that failed first and passes its last line on.
# Rank 0 times out and closes the store; rank 1, on the same timeout, may be
# seen first: either way the line says how many ranks arrived.
NNODES=2 NODE_RANK=0 train launcher --nproc-per-node 2 --model smallcnn --rendezvous-timeout 3
expect_code 1 launcher
grep -Eq "ddp-train: error: rank [01] \(local rank [01], pid [0-9]+\) exited with status 1; its last line: .*2 of 4 ranks arrived" \
  "$T/launcher.out" || fail "the launcher did not name the failed rank with the rendezvous line: $(cat "$T/launcher.out")"

begin=$(date +%s)
RANK=1 WORLD_SIZE=2 train rank1 --model smallcnn --rendezvous-timeout 2
expect_code 1 rank1
expect_in rank1 "ddp-train: error: rendezvous: rank 1 cannot reach the TCPStore at 127.0.0.1:$MASTER_PORT within 2 s"
took=$(($(date +%s) - begin))
[ "$took" -le 30 ] || fail "rank 1 waited $took s for the TCPStore (limit 2 s)"
