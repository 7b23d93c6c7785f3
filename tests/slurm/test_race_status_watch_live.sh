#!/usr/bin/env bash
# `status --watch` follows a race group live: RACING while its jobs are held,
# then WON with the winner beneath, and it stops when every job has ended.
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
SBATCH_HOLD=1 run submit job.yaml
expect_code 0
run_dir=$(only_run_dir)
"$LOCAL_SLURM" exec -- timeout 60 "$DDPCTL" status --watch "$(basename "$run_dir")" >watch.out 2>&1 &
watcher=$!
for _ in $(seq 100); do grep -q "RACING" watch.out && break; sleep 0.1; done
grep -q "racing: shapes 1x1, gpu" watch.out || fail "watch did not show the race racing: $(cat watch.out)"
# The first released may win and cancel the second before scontrol reaches it.
# shellcheck disable=SC2046
if ! on_login scontrol release $(cat "$run_dir"/race/jobs/*) 2>release.err; then
  grep -q "already finished" release.err || fail "release failed: $(cat release.err)"
fi
wait "$watcher" || fail "status --watch did not end by itself: $(tail -20 watch.out)"
frames=$(grep -c "^ddpctl status, every" watch.out)
[ "$frames" -ge 2 ] || fail "watch printed $frames frame(s)"
tail -5 watch.out | grep -Eq "race +WON +.*won by shape (1x1|gpu)" || fail "the last frame does not show the winner: $(tail -5 watch.out)"
tail -5 watch.out | grep -q "race winner" || fail "the last frame does not mark the winner's job: $(tail -5 watch.out)"
