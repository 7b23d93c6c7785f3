#!/usr/bin/env bash
# The fabric check's measurement: `ddp-train --allreduce-bench` times the
# all-reduce across the ranks (Gloo here; NCCL with NCCL_ALGO=Ring on GPUs,
# bench/gpu) and prints one JSON line per size with nccl-tests' figures:
# algbw = bytes / seconds, busbw = algbw x 2(n-1)/n. Bad input: one rank,
# a word that is no size, a size larger than the node's memory.
# --allreduce-pairs (the fabric check's bisection): node pairs round by round
# (round k: node i with node i XOR 2^(k-1)), each pair's figures on rank 0
# with its nodes' host names; here each rank is a node of its own.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
train bench --nproc-per-node 3 --allreduce-bench 64K,4M --bench-iters 5
expect_code 0 bench
grep '^{"allreduce"' "$T/bench.out" >"$T/lines.jsonl" || fail "no measurement line: $(cat "$T/bench.out")"
python3 - "$T/lines.jsonl" <<'PY' || fail "the measurements are not nccl-tests' figures: $(cat "$T/lines.jsonl")"
import json, sys
lines = [json.loads(l)["allreduce"] for l in open(sys.argv[1])]
assert [m["bytes"] for m in lines] == [65536, 4 << 20], lines  # one line per size, rank 0's alone
for m in lines:
    assert m["ranks"] == 3 and m["ranks_per_node"] == 3 and m["backend"] == "gloo" and m["iters"] == 5, m
    assert m["seconds"] > 0, m
    assert abs(m["algbw_gbs"] - m["bytes"] / m["seconds"] / 1e9) < 1e-9 * m["algbw_gbs"], m
    assert abs(m["busbw_gbs"] - m["algbw_gbs"] * 2 * 2 / 3) < 1e-9 * m["busbw_gbs"], m
PY
train one --allreduce-bench 1M
expect_code 1 one
expect_in one "--allreduce-bench needs 2 ranks or more (WORLD_SIZE is 1)"
train word --nproc-per-node 2 --allreduce-bench 4M,lots
expect_code 1 word
expect_in word "--allreduce-bench: 'lots' is not a size in bytes (e.g. 1M, 16M, 1G)"
train huge --nproc-per-node 2 --allreduce-bench 4096G
expect_code 1 huge
expect_in huge "--allreduce-bench: 4398046511104 bytes, twice on each of this node's 2 rank(s), is more than its free memory"
# pairs NAME NODES: NODES ranks, one a node, with --allreduce-pairs.
pairs() {
  local name=$1 n=$2 r pids=()
  for ((r = 0; r < n; r++)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 "$DDP_TRAIN" --allreduce-bench 64K,1M --bench-iters 3 \
      --allreduce-pairs >"$T/$name.$r.out" 2>&1 &
    pids+=($!)
  done
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || fail "$name: rank $r failed: $(cat "$T/$name.$r.out")"; done
}
pairs four 4
pairs three 3
python3 - "$T/four.0.out" "$T/three.0.out" "$(hostname)" <<'PY' || fail "the pairs are not the rounds asked: $(cat "$T/four.0.out" "$T/three.0.out")"
import json, sys
host = sys.argv[3]
for path, want in ((sys.argv[1], [(1, [0, 1]), (1, [2, 3]), (2, [0, 2]), (2, [1, 3])]),
                   (sys.argv[2], [(1, [0, 1]), (2, [0, 2])])):
    lines = [json.loads(l)["allreduce_pair"] for l in open(path) if l.startswith('{"allreduce_pair"')]
    assert [(m["round"], m["nodes"]) for m in lines] == want, lines
    for m in lines:
        assert m["bytes"] == 1 << 20 and m["ranks"] == 2 and m["seconds"] > 0 and m["hosts"] == [host, host], m
        assert abs(m["busbw_gbs"] - m["algbw_gbs"]) < 1e-9 * m["busbw_gbs"], m  # 2(n-1)/n = 1 for a pair
for r in (1, 2, 3):
    # Rank 0 alone prints the figures (torch 2's Gloo says INFO lines of its own).
    assert "allreduce_pair" not in open(sys.argv[1].replace(".0.", ".%d." % r)).read(), r
PY
train pairs-one --nproc-per-node 2 --allreduce-bench 1M --allreduce-pairs
expect_code 1 pairs-one
expect_in pairs-one "--allreduce-pairs needs 2 nodes or more (all 2 ranks are on one node)"
echo "ok: $(wc -l <"$T/lines.jsonl") sizes measured"
