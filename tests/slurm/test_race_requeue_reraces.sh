#!/usr/bin/env bash
# Re-racing after a requeue. Round 1: the winner is signalled as at its time
# limit; its script requeues it and, from inside the job, submits the other
# shape into generation 2. Round 2: generation 2's winner is requeued by an
# admin's `scontrol requeue` (its script is killed, so it cannot act);
# `ddpctl status` and `logs -f` only say so, naming `ddpctl race-again RUN`
# (reading never submits), which opens generation 3. In each round the
# requeued job waits for its BeginTime while the other shape's nodes are
# free, so the other shape wins and resumes from the checkpoint. Never two
# trainings at once; max_restarts 2 allows no fourth generation.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Whether this cluster's nodes can run this build of ddpctl at all, asked of
# a node (by capability, not by version).
nodes_run_ddpctl=no
if timeout 120 "$LOCAL_SLURM" exec -- srun -p cpu -N 1 -n 1 -t 1 "$DDPCTL" --version >/dev/null 2>&1; then nodes_run_ddpctl=yes; fi
# A training that resumes from its checkpoint (a step counter) and checkpoints
# and stops with 75 on USR1/TERM; a second training at once is recorded.
cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")
if ! mkdir "$dir/training.lock" 2>/dev/null; then
  echo "job $SLURM_JOB_ID started while job $(cat "$dir/training.lock/owner") trained" >>"$dir/double"
  exit 1
fi
echo "$SLURM_JOB_ID" >"$dir/training.lock/owner"
step=$(cat "$dir/ckpt" 2>/dev/null || echo 0)
echo "$SLURM_JOB_ID $step" >>"$dir/trainings"
echo "training from step $step"
stop() { echo "$step" >"$dir/ckpt"; rm -rf "$dir/training.lock"; echo "checkpointed at step $step"; exit 75; }
trap stop USR1 TERM
while :; do
  step=$((step + 1))
  echo "$step" >"$dir/ckpt"
  sleep 0.1 &
  wait $!
done
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 60, max_restarts: 2}
command: [$T/program.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
# Followed from submission on: --follow goes on with each generation's winner.
"$LOCAL_SLURM" exec -- "$DDPCTL" submit job.yaml --follow >follow.out 2>&1 &
follower=$!
at_exit "kill $follower 2>/dev/null || true"
for _ in $(seq 300); do grep -q "^race: won by shape" follow.out && break; sleep 0.2; done
grep -q "^race: won by shape" follow.out || fail "submit --follow did not report a winner: $(cat follow.out)"
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")
# logs -f follows each generation's winner too (and says when one waits for a re-race).
"$LOCAL_SLURM" exec -- "$DDPCTL" logs "$run_id" -f >logsf.out 2>&1 &
logs_follower=$!
at_exit "kill $logs_follower 2>/dev/null || true"

# trainer_is JOB: waits until JOB trains (its line in trainings) and has taken a step.
trainer_is() {
  local deadline=$((SECONDS + 60))
  until [ -f trainings ] && grep -q "^$1 " trainings && [ "$(cat ckpt 2>/dev/null || echo 0)" -gt "$(awk -v j="$1" '$1 == j { s = $2 } END { print s + 0 }' trainings)" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "job $1 did not train within 60 s: trainings: $(cat trainings 2>&1); race: $(find "$run_dir/race" | sort | tr '\n' ' ')$(jobs_report)"
    sleep 0.2
  done
}
# winner_of GEN: waits for generation GEN's winner and prints its job id.
winner_of() {
  local claim="$run_dir/race/claim.$1" deadline=$((SECONDS + 90))
  [ "$1" -gt 1 ] || claim="$run_dir/race/claim"
  until [ -s "$claim/winner" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "generation $1 was not won within 90 s: race: $(find "$run_dir/race" | sort | tr '\n' ' ')$(jobs_report)"
    sleep 0.2
  done
  cut -d' ' -f1 "$claim/winner"
}
# label_of GEN JOB: the shape label JOB was recorded under in generation GEN.
label_of() {
  local jobs="$run_dir/race/gen.$1/jobs"
  [ "$1" -gt 1 ] || jobs="$run_dir/race/jobs"
  grep -lx "$2" "$jobs"/* | xargs -n1 basename
}

w1=$(winner_of 1)
trainer_is "$w1"
# Round 1: what Slurm does `grace` seconds before the time limit.
on_login scancel --batch --signal=USR1 "$w1"
w1_log="logs/${JOB_NAME}-$(label_of 1 "$w1")_$w1"
deadline=$((SECONDS + 60))
until [ -d "$run_dir/race/gen.2" ]; do
  # Where the nodes cannot run this build of ddpctl (one built with
  # DDPCTL_LIBC_ONLY=OFF, on the 24.11 and 26.05 clusters' newer Debians),
  # the job says so, as on such a site, and the user re-races by hand.
  if [ "$nodes_run_ddpctl" = no ] && grep -q "the re-race failed here" "$w1_log.err" 2>/dev/null; then
    run race-again "$run_id"  # refuses until Slurm shows the job requeued and waiting
  fi
  [ "$SECONDS" -lt "$deadline" ] || fail "no re-race 60 s after the stop signal: $(cat "$w1_log".{out,err} 2>&1)$(jobs_report)"
  sleep 0.2
done
if [ "$nodes_run_ddpctl" = yes ]; then
  # race-again makes the generation's folder (its claim) first, and says
  # so in the job's log when it ends (its stdout there is a file: buffered),
  # within the script's 60 s limit on it.
  deadline=$((SECONDS + 60))
  until grep -q "generation 2 opened: job $w1 (shape $(label_of 1 "$w1")), the winner of generation 1, requeued itself" "$w1_log.out"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "the requeuing job did not re-race the group: $(cat "$w1_log".{out,err} 2>&1)"
    sleep 0.2
  done
fi
w2=$(winner_of 2)
[ "$w2" != "$w1" ] || fail "generation 2 was won by the requeued job $w1 itself; the other shape should start first$(jobs_report)"
[ "$(label_of 2 "$w2")" != "$(label_of 1 "$w1")" ] || fail "generation 2's winner $w2 has the requeued winner's shape"
trainer_is "$w2"
for _ in $(seq 300); do grep -q "^race: generation 2 won by shape" follow.out && break; sleep 0.2; done
grep -q "^race: generation 2 won by shape $(label_of 2 "$w2") (job $w2)" follow.out ||
  fail "submit --follow did not go on with generation 2's winner: $(cat follow.out)"

# Round 2: an admin requeues the winner; its script cannot act. status and
# logs -f say what waits and which command acts, and submit nothing.
on_login scontrol requeue "$w2"
note="run $run_id: the race's winner, job $w2, was requeued and waits; \`ddpctl race-again $run_id\` races the other shapes again (status only reads)"
deadline=$((SECONDS + 60))
until grep -qF "$note" "$T/err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not say that $w2 waits for a re-race: $(cat "$T/out" "$T/err")$(jobs_report)"
  sleep 0.5
  run status "$run_id"
done
[ ! -d "$run_dir/race/gen.3" ] || fail "status re-raced: reading must never submit$(jobs_report)"
deadline=$((SECONDS + 60))
until grep -qF "==> job $w2 was requeued and waits; \`ddpctl race-again $run_id\` races the other shapes again (logs only reads) <==" logsf.out; do
  [ "$SECONDS" -lt "$deadline" ] || fail "logs -f did not say that $w2 waits for a re-race: $(cat logsf.out)"
  sleep 0.2
done
[ ! -d "$run_dir/race/gen.3" ] || fail "logs -f re-raced: reading must never submit$(jobs_report)"
run race-again "$run_id"
expect_code 0
expect_out "generation 3 opened: job $w2"
w3=$(winner_of 3)
[ "$w3" != "$w2" ] || fail "generation 3 was won by the requeued job $w2 itself$(jobs_report)"
trainer_is "$w3"

for g in 2 3; do
  for _ in $(seq 300); do grep -q "==> race $run_id: generation $g won by" logsf.out && break; sleep 0.2; done
  grep -q "==> race $run_id: generation $g won by shape $(label_of "$g" "$(winner_of "$g")") (job $(winner_of "$g")); following it <==" logsf.out ||
    fail "logs -f did not go on with generation $g's winner: $(cat logsf.out)"
done
run status "$run_id"
expect_code 0
expect_out "generation 3 (re-raced: job $w2"
expect_out "race winner of generation 3"
expect_out "won generation 1, then requeued"
expect_out "won generation 2, then requeued"
run status "$run_id" --json
expect_out '"generation": 3'
# Three trainings, one after the other, each resuming where the last stopped.
echo "trainings (job, first step): $(tr '\n' ';' <trainings)"
[ "$(wc -l <trainings)" -eq 3 ] || fail "expected 3 trainings (jobs $w1 $w2 $w3): $(cat trainings)"
awk 'NR > 1 && $2 <= prev { bad = 1 } { prev = $2 } END { exit bad }' trainings ||
  fail "a training did not resume from the checkpoint: $(cat trainings)"
[ ! -e double ] || fail "two trainings at once: $(cat double)"
# The group has had 1 + max_restarts generations: no fourth.
run race-again "$run_id" --requeuing "$w3"
expect_code 0
expect_out "not racing again: the group has had 3 generation(s), requeue.max_restarts (2) allows 3"
