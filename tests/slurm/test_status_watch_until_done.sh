#!/usr/bin/env bash
# status --watch refreshes until every job shown has ended, then returns.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 2"
YAML
# Held until the watch has drawn its first frame: a job that ran before the
# watch started (a loaded machine) would leave only one frame to see.
hold_submissions
run submit job.yaml
expect_code 0
id=$(job_ids)
[ -n "$id" ] || fail "the submitted job is not in squeue"
timeout 120 "$LOCAL_SLURM" exec -- "$DDPCTL" status "$JOB_NAME" --watch >"$T/out" 2>"$T/err" &
watcher=$!
for _ in $(seq 300); do
  grep -q "ddpctl status, every" "$T/out" && break
  kill -0 "$watcher" 2>/dev/null || break
  sleep 0.2
done
grep -q "ddpctl status, every" "$T/out" || fail "status --watch drew no frame within 60 s; stdout: $(cat "$T/out"); stderr: $(cat "$T/err")"
on_login scontrol release "$id" || fail "scontrol release $id failed"
set +e
wait "$watcher"
code=$?
set -e
expect_code 0
expect_out "ddpctl status, every 0.5-30s"
expect_out "COMPLETED"
# Off a terminal: the table once, then only the rows that changed.
[ "$(grep -c "ddpctl status, every" "$T/out")" -eq 1 ] || fail "status --watch repeated its heading off a terminal: $(cat "$T/out")"
[ "$(grep -c "^RUN " "$T/out")" -eq 1 ] || fail "status --watch repeated the table's header off a terminal: $(cat "$T/out")"
rows=$(grep -c " $id " "$T/out" || true)
[ "$rows" -ge 2 ] || fail "status --watch did not print job $id's row again when it changed: $(cat "$T/out")"
last=$(grep " $id " "$T/out" | tail -n 1)
grep -q "COMPLETED" <<<"$last" || fail "the last row of job $id is not COMPLETED: $last"
