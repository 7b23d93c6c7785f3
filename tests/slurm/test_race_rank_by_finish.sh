#!/usr/bin/env bash
# --rank-by finish (and race --plan) predict each shape's run time from
# earlier runs of the same program in the runs folder, add it to Slurm's
# estimated start, and drop a shape that could not finish first even if it
# started now, saying why; status shows it as DROPPED.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# A program that reports its throughput as the bundled trainer does: one node
# 100 img/s for 10000 images (100 s); two nodes 180 img/s (90% efficiency,
# 56 s), so that the one-node shape cannot finish first even if the other
# one's start is estimated some seconds away (its nodes still completing).
cat >"$T/trainer.sh" <<'SH'
#!/bin/bash
if [ "$SLURM_NNODES" = 1 ]; then rate=100.0 secs=100.0; else rate=180.0 secs=55.6; fi
if [ "$SLURM_PROCID" = 0 ]; then
  echo "{\"epoch\": 1, \"epochs\": 1, \"img_per_s\": $rate, \"epoch_s\": $secs, \"world_size\": $SLURM_NNODES}" >>"$DDPCTL_METRICS_FILE"
fi
SH
chmod +x "$T/trainer.sh"
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [$T/trainer.sh]
alternatives:
  - {nodes: 2, label: two}
YAML
# Nothing measured yet: ranked by start, and it says why.
run race job.yaml --plan --no-preflight
expect_code 0
expect_out "no predicted run time for shape 1x1: ranked by estimated start (no earlier run of command $T/trainer.sh"
# Earlier runs of each shape.
for shape in 1x1 two; do
  run submit job.yaml --shape "$shape" --follow
  expect_code 0
  expect_out "COMPLETED"
done
run race job.yaml --plan --no-preflight
expect_code 0
echo "plan: $(cat "$T/out")"
expect_out "shapes by predicted finish (sbatch --test-only, run times from earlier runs):"
expect_out "RUN TIME"
grep -qE "^  1 +two +(now|in [0-9ms]+ \([^)]*\)) +56s \(measured\)" "$T/out" || fail "shape two is not first by finish: $(cat "$T/out")"
grep -qE "^  - +1x1 .*1m40s \(measured\) +dropped .*even starting now it would finish in 1m40s \(1m40s run time\), after shape two's predicted finish in [0-9ms]+$" "$T/out" ||
  fail "shape 1x1 was not dropped with its reason: $(cat "$T/out")"
expect_out "a race would submit two; nothing was submitted"

# Submitting ranks the same way: only shape two is submitted.
run submit job.yaml --rank-by finish --no-preflight --again
expect_code 0
expect_out "submitted race of job"
grep -q "(shape 1x1)" "$T/out" && fail "the dropped shape was submitted: $(cat "$T/out")"
run_id=$(sed -n 's/.* as run \([^:]*\):.*/\1/p' "$T/out")
[ -n "$run_id" ] || fail "no run id in: $(cat "$T/out")"
run status "$run_id"
expect_out "DROPPED"
expect_out "not submitted: even starting now it would finish in 1m40s"
# --rank-by start keeps both, as --rank-by-estimate did.
run race job.yaml --plan --rank-by start --no-preflight
expect_code 0
expect_out "shapes by estimated start (sbatch --test-only):"
# (in the order of their estimated starts, which may differ while nodes complete)
grep -qE "^a race would submit (1x1, two|two, 1x1); nothing was submitted$" "$T/out" ||
  fail "ranked by start, both shapes should be kept: $(cat "$T/out")"
