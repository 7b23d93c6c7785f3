#!/usr/bin/env bash
# Two nodes' launchers, one worker each; node 1's worker is killed. Node 1's
# launcher exits 1 naming its rank; node 0's, whose worker only lost its
# peer, exits 76 (kPeerFailedExit) and says a peer failed first, so that the
# in-job restart leaves out node 1 whichever task srun names first.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
export DDPCTL_PROGRESS_FILE=$T/progress.json
args=(--nproc-per-node 1 --model smallcnn --synthetic-size 100000 --epochs 5 --workers 0)
NODE_RANK=1 NNODES=2 start node1 "${args[@]}"
launcher1=$pid
NODE_RANK=0 NNODES=2 start node0 "${args[@]}"
launcher0=$pid
wait_progress "$DDPCTL_PROGRESS_FILE" 1 2
victim=$(pgrep -P "$launcher1" || true)
[ -n "$victim" ] || fail "no worker under node 1's launcher"
kill -KILL "$victim"
finish "$launcher1" 60
code1=$code
finish "$launcher0" 120
code0=$code
echo "node 1's launcher exited $code1, node 0's $code0"
[ "$code1" -eq 1 ] || fail "node 1's launcher exited $code1, expected 1: $(cat node1.out)"
# (LibTorch 2 workers print Gloo's INFO lines: the launcher's line then
# names the last one before "; stopping".)
expect_in node1 "ddp-train: error: rank 1 (local rank 0, pid $victim) was killed by signal 9 (Killed)"
expect_in node1 "; stopping the other workers"
if grep -qF "(a peer failed first)" "$T/node1.out"; then fail "node 1 blames a peer for its own worker's death: $(cat "$T/node1.out")"; fi
[ "$code0" -eq 76 ] || fail "node 0's launcher exited $code0, expected 76 (a peer failed): $(cat node0.out)"
expect_in node0 "(a peer failed first); stopping the other workers"
if pgrep -P "$launcher0" >/dev/null; then fail "workers left behind"; fi
