#!/usr/bin/env bash
# The winner's node fails (its slurmd and the job's processes die at once).
# Once Slurm gives up on the node (SlurmdTimeout, 30 s on the local cluster)
# it requeues the job (the spec has requeue:, Slurm's JobRequeue=1), and the
# job's script never gets to act: `ddpctl status` on the login node sees the
# winner requeued and says so, naming `ddpctl race-again RUN` (reading never
# submits), which races the group again. The other shape, on other nodes,
# wins generation 2 and trains; the requeued job is cancelled.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")
echo "$SLURM_JOB_ID $(hostname)" >>"$dir/trainings"
echo "training on $(hostname)"
sleep 600
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 60, max_restarts: 1}
command: [$T/program.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
run submit job.yaml --wait
expect_code 0
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")
for _ in $(seq 300); do [ -s trainings ] && break; sleep 0.2; done
[ -s trainings ] || fail "nothing trained: $(cat logs/* 2>&1)$(jobs_report)"
read -r w1 node <trainings
[ "$(cut -d' ' -f1 "$run_dir/race/claim/winner")" = "$w1" ] || fail "job $w1 trains but is not the winner"
# The node comes back when the test ends, whatever happens.
at_exit "\"$LOCAL_SLURM\" node start $node"
"$LOCAL_SLURM" node crash "$node"
note="run $run_id: the race's winner, job $w1, was requeued and waits; \`ddpctl race-again $run_id\` races the other shapes again (status only reads)"
deadline=$((SECONDS + 150))
until grep -qF "$note" "$T/err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "status did not say within 150 s of the crash of $node that $w1 waits for a re-race: $(cat "$T/out" "$T/err")$(slurmctld_log_of "$w1")$(jobs_report)"
  sleep 0.5
  run status "$run_id"
done
[ ! -d "$run_dir/race/gen.2" ] || fail "status re-raced: reading must never submit$(jobs_report)"
run race-again "$run_id"
expect_code 0
echo "race-again: $(cat "$T/out")"
grep -q "generation 2 opened: job $w1 (shape [^)]*), the winner of generation 1, requeued" "$T/out" ||
  fail "race-again did not say why it re-raced: $(cat "$T/out" "$T/err")"
deadline=$((SECONDS + 60))
until [ "$(wc -l <trainings)" -ge 2 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 2 did not train within 60 s: $(cat trainings)$(jobs_report)"
  sleep 0.2
done
read -r w2 node2 < <(sed -n 2p trainings)
[ "$w2" != "$w1" ] || fail "the requeued job $w1 trained again, on $node2; the other shape should have won"
[ "$node2" != "$node" ] || fail "generation 2 trains on the failed node $node"
[ "$(cut -d' ' -f1 "$run_dir/race/claim.2/winner")" = "$w2" ] || fail "job $w2 trains but did not win generation 2"
# The requeued job is cancelled by the new winner (or stands down if it starts).
wait_for_job "$w1" CANCELLED 60
run status "$run_id"
echo "status: $(cat "$T/out")"
expect_out "race winner of generation 2"
expect_out "won generation 1, then requeued; lost generation 2"
[ "$(wc -l <trainings)" -eq 2 ] || fail "expected 2 trainings: $(cat trainings)"
"$LOCAL_SLURM" node start "$node"
