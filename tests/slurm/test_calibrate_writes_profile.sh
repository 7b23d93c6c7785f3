#!/usr/bin/env bash
# `ddpctl calibrate cpu --profile site.yaml --nodes 4 --write` on the local
# cluster's 4 cpu nodes, as a site admin runs it: the whole set and 2
# disjoint pairs measured by ddp-train --allreduce-bench (Gloo over the
# nodes' links), each job on whole nodes; the pairs' median written into
# the profile's cpu entry, which ddpctl then reads (gen, and a job's fabric
# check judges by it); the JSON document validated.
# On every version: calibrate's jobs and the check's step inside a job are
# Slurm's side (whole nodes, disjoint pairs at once, a step before the
# training step). 24.11's and 26.05's nodes have no ddp-train of this build
# (it links the host's LibTorch 1.13): there tests/slurm/allreduce_bench.py
# measures in its place, the same all-reduce with the nodes' own torch: seen
# to have run on every rank of calibrate's jobs, and given to the job's check.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
if [ "$SLURM_VERSION" = 22.05 ]; then
  [ -x "$(dirname "$DDPCTL")/../trainer/ddp-train" ] ||
    skip "ddp-train is not built (LibTorch missing): calibrate measures with it"
else
  # The nodes see the source tree at its path (scripts/local-slurm).
  export DDPCTL_TRAINER="$DDPCTL_SOURCE/tests/slurm/allreduce_bench.py"
fi
cp "$DDPCTL_SOURCE/configs/clusters/local.yaml" "$T/site.yaml"
run calibrate cpu --profile "$T/site.yaml" --nodes 4 --size 4M --iters 5 --write --json
expect_code 0
cp "$T/out" "$T/calibrate.json"
/usr/bin/python3 "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" "$T/calibrate.json" >"$T/valid" 2>&1 ||
  fail "calibrate's document is not valid: $(cat "$T/valid")"
/usr/bin/python3 - "$T/calibrate.json" <<'PY' || fail "calibrate did not measure the pairs and the set: $(cat "$T/calibrate.json")"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
pairs = d["pairs"]
assert len(pairs) == 2 and all(p["node_count"] == 2 and p["busbw_gbs"] > 0 for p in pairs), pairs
assert pairs[0]["nodes"] != pairs[1]["nodes"], pairs  # disjoint: both ran at once on whole nodes
assert d["whole"]["node_count"] == 4 and d["whole"]["busbw_gbs"] > 0, d["whole"]
assert abs(d["busbw_gbs"] - statistics.median(p["busbw_gbs"] for p in pairs)) < 1e-9, d
assert d["written"] is True
PY
figure=$(/usr/bin/python3 -c 'import json,sys; print(format(json.load(open(sys.argv[1]))["busbw_gbs"], ".4g"))' "$T/calibrate.json")
grep -q "^  cpu: *{busbw_gbs: $figure, nodes: 4" "$T/site.yaml" || fail "the profile's cpu entry lacks busbw_gbs: $figure: $(grep -n 'cpu:' "$T/site.yaml")"
# The comments and every other entry are as they were.
diff <(grep -v "^  cpu:" "$DDPCTL_SOURCE/configs/clusters/local.yaml") <(grep -v "^  cpu:" "$T/site.yaml") >"$T/diff" ||
  fail "calibrate changed more than the cpu entry: $(cat "$T/diff")"
# ddpctl reads the profile it wrote.
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: hostname
YAML
sed -i "s|^cluster: local|cluster: $T/site.yaml|" job.yaml
run gen job.yaml --stdout
expect_code 0
# ... and the fabric check a job of 2 nodes or more makes with it, by
# default, judges the allocation by the figure written (on 2 nodes a
# figure below it warns, with no node to name, and training goes on).
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 120
[ -f "logs/${JOB_NAME}_$id.restart0.fabric.json" ] || fail "the job made no fabric check$(job_logs_of "$id")"
/usr/bin/python3 - "logs/${JOB_NAME}_$id.restart0.fabric.json" "$figure" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
assert r["expected_gbs"] == float(sys.argv[2]) and r["nodes"] == ["g1", "g2"], r
assert r["level"] in ("ok", "warn", "fail") and r["measures"][0]["busbw_gbs"] > 0 and r["exclude"] == [], r
print("fabric check with the calibrated figure:", r["text"])
PY
  fail "the check did not use the calibrated figure: $(cat "logs/${JOB_NAME}_$id.restart0.fabric.json")"
if [ "$SLURM_VERSION" != 22.05 ]; then
  # The stand-in measured: each of calibrate's 4 + 2 + 2 ranks said so in
  # its step log; the job's check was given it as its trainer (the check's
  # own output goes to ddpctl job fabric, not to a file).
  grep -rqF -- "--trainer $DDPCTL_TRAINER " "$DDPCTL_RUNS" ||
    fail "the job's script does not give the check tests/slurm/allreduce_bench.py: $(grep -rh -- '--trainer' "$DDPCTL_RUNS")"
  ran=$(grep -rhs "^allreduce_bench.py: rank [0-9] of [0-9] on g[0-9]" "$T" | sort -u | wc -l)
  echo "tests/slurm/allreduce_bench.py measured as $ran distinct rank(s)"
  [ "$ran" -ge 8 ] || fail "tests/slurm/allreduce_bench.py said it ran $ran time(s), not 8 (calibrate's ranks): $(grep -rhs allreduce_bench.py "$T")"
fi
echo "calibrate: cpu busbw_gbs $figure"
