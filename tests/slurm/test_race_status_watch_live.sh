#!/usr/bin/env bash
# `status --watch` follows a race group live: RACING while its jobs are held,
# then WON with the winner beneath, and it stops when every job has ended.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'echo trained; sleep 1'
alternatives:
  - {partition: gpu, label: gpu}
YAML
hold_submissions
run submit job.yaml
expect_code 0
run_dir=$(only_run_dir)
"$LOCAL_SLURM" exec -- timeout 180 "$DDPCTL" status --watch "$(basename "$run_dir")" >watch.out 2>&1 &
watcher=$!
for _ in $(seq 600); do grep -q "RACING" watch.out && break; sleep 0.1; done
grep -q "racing: shapes 1x1, gpu" watch.out || fail "watch did not show the race racing within 60 s: $(cat watch.out)"
# The first released may win and cancel the second before scontrol reaches it.
# shellcheck disable=SC2046
if ! on_login scontrol release $(cat "$run_dir"/race/jobs/*) 2>release.err; then
  grep -q "already finished" release.err || fail "release failed: $(cat release.err)"
fi
wait "$watcher" || fail "status --watch did not end by itself: $(tail -20 watch.out)"
# Off a terminal the first table comes whole, then each row as it changes:
# the group's row changes from RACING to WON, and the winner is marked.
out=$(cat watch.out)
grep -Eq "race +WON +.*won by shape (1x1|gpu)" <<<"$out" || fail "watch never showed the winner: $out"
grep -q "race winner" <<<"$out" || fail "watch never marked the winner's job: $out"
last_race=$(grep -E "^[^ ]+ +- +race " <<<"$out" | tail -n 1)
grep -q "WON" <<<"$last_race" || fail "the group's last row is not WON: $last_race"
