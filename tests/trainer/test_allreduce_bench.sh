#!/usr/bin/env bash
# The fabric check's measurement: `ddp-train --allreduce-bench` times the
# all-reduce across the ranks (Gloo here; NCCL with NCCL_ALGO=Ring on GPUs,
# bench/gpu) and prints one JSON line per size with nccl-tests' figures:
# algbw = bytes / seconds, busbw = algbw x 2(n-1)/n. Bad input: one rank,
# a word that is no size, a size larger than the node's memory.
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
echo "ok: $(wc -l <"$T/lines.jsonl") sizes measured"
