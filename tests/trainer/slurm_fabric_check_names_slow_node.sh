#!/usr/bin/env bash
# The fabric check (docs/running.md "The fabric check") on the local
# cluster's 4 cpu nodes, with the example spec a user starts from
# (configs/local-restart.yaml: 2 nodes and a spare; here 3 and the spare,
# all 4 nodes) and a site profile whose cpu partition has busbw_gbs and a
# fabric_check: sized for these CPU nodes (1 MiB; a bound of 30 s).
# 1. g3 sends at 40 Mbit/s (`local-slurm node slow-link`, seen to fire by
#    its byte count): the whole set's all-reduce is below the failure
#    level, 2 rounds of pairs name g3 (slow with g4 and with g1: 3 rounds
#    in all), the node check's verdict leaves it out, the spare takes its
#    place, and the bundled trainer trains and the job COMPLETES without a
#    requeue; the record, the batch log, status and the run's event say so.
# 2. Only the link between g1 and g2 is slow: a plain program's job (the
#    check runs for any program); it is named a link (each end fine with
#    another node), g2 is left out and the spare runs in its place.
# One version: a user journey across real nodes (the fakes cannot slow a link).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
mkdir -p "$T/clusters"
sed 's/^  cpu: *{nodes: 4, gpus_per_node: 0,/  cpu: {nodes: 4, busbw_gbs: 0.02, gpus_per_node: 0,/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >"$T/clusters/local.yaml"
grep -q "busbw_gbs: 0.02" "$T/clusters/local.yaml" || fail "the profile copy has no busbw_gbs: $(grep -n 'cpu:' "$T/clusters/local.yaml")"
# The failure level is 50% of 0.02 GB/s: 0.01, 100 ms for the 1 MiB of a
# pair's all-reduce. A healthy veth here takes about 1 ms (0.8 GB/s at 8 MiB
# in the calibrate journey); a link at 40 Mbit/s, 0.005 GB/s (200 ms).
echo "fabric_check: {size: 1M, iters: 3, timeout: 30s}" >>"$T/clusters/local.yaml"
export DDPCTL_CLUSTERS="$T/clusters"

# record_of ID: the fabric check's record of the job's first attempt.
record_of() {
  [ -f "logs/${JOB_NAME}_$1.restart0.fabric.json" ] || fail "no fabric check record for job $1$(job_logs_of "$1")"
  cat "logs/${JOB_NAME}_$1.restart0.fabric.json"
}

"$LOCAL_SLURM" node slow-link g3 40mbit >/dev/null
at_exit "'$LOCAL_SLURM' node fast-link g3"
cp "$DDPCTL_SOURCE/configs/local-restart.yaml" job.yaml
sed -i "s/^name: local-restart$/name: $JOB_NAME/" job.yaml
run submit job.yaml --set nodes=3 --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 300
"$LOCAL_SLURM" node fast-link g3 >"$T/fast" 2>&1
grep -qE "full speed again \([1-9][0-9]* bytes went through the limit\)" "$T/fast" ||
  fail "nothing went through g3's limit: $(cat "$T/fast")"
record_of "$id" >"$T/node.json"
/usr/bin/python3 - "$T/node.json" <<'PY' || fail "the check did not name g3: $(cat "$T/node.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["nodes"] == ["g1", "g2", "g3", "g4"] and r["level"] == "fail", r
assert r["rounds"] == 3 and r["bad_nodes"] == ["g3"] and r["bad_links"] == [] and r["exclude"] == ["g3"], r
pairs = [m for m in r["measures"] if m["round"] > 1]
assert len(pairs) == 4, pairs
for m in pairs:
    slow = m["busbw_gbs"] < 0.01
    assert slow == ("g3" in m["nodes"]), m
PY
grep -qF "node g3 is slow with every partner" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not name g3$(job_logs_of "$id")"
grep -qE "restart 1 of 2 in the job: the node check failed on g3; g3 left out, spare g4 taken" "logs/${JOB_NAME}_$id.err" ||
  fail "the spare did not take g3's place$(job_logs_of "$id")"
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
[ "$(cat "$T/states")" = COMPLETED ] || fail "job $id has more than one record: $(cat "$T/states")"
grep '"type": *"fabric_checked"' "$(only_run_dir)/events.ndjson" >"$T/event.json" ||
  fail "no fabric_checked event: $(cat "$(only_run_dir)/events.ndjson")"
/usr/bin/python3 "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" "$T/event.json" >"$T/valid" 2>&1 ||
  fail "the fabric_checked event is not valid: $(cat "$T/valid")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "fabric: 4 nodes:"
expect_out "node g3 is slow with every partner"

"$LOCAL_SLURM" node slow-link g1 40mbit g2 >/dev/null
at_exit "'$LOCAL_SLURM' node fast-link g1 g2"
rm -rf "$DDPCTL_RUNS"
write_spec link.yaml <<YAML
partition: cpu
nodes: 3
gpus_per_node: 0
procs_per_node: 1
restart: {in_job: 1, spares: 1}
command: 'echo "training on \$(hostname) in step \$DDPCTL_RESTART"'
YAML
run submit link.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 120
"$LOCAL_SLURM" node fast-link g1 g2 >"$T/fast" 2>&1
grep -qE "\([1-9][0-9]* bytes went through the limit\)" "$T/fast" || fail "nothing went through the link's limit: $(cat "$T/fast")"
record_of "$id" >"$T/link.json"
/usr/bin/python3 - "$T/link.json" <<'PY' || fail "the check did not name the link: $(cat "$T/link.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["level"] == "fail" and r["rounds"] == 3, r
assert r["bad_nodes"] == [] and r["bad_links"] == [["g1", "g2"]] and r["exclude"] == ["g2"], r
PY
grep -qF "the link between g1 and g2 is slow while each is fine with another" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not name the link$(job_logs_of "$id")"
if grep -q "training on g2" "logs/${JOB_NAME}_$id.restart0."*.out; then fail "a step ran on g2"; fi
grep -q "training on g4 in step 1" "logs/${JOB_NAME}_$id.restart0."*.out ||
  fail "the spare did not run: $(cat "logs/${JOB_NAME}_$id.restart0."*.out)"
echo "fabric check: $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"])' "$T/node.json")"
