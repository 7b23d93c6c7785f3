#!/usr/bin/env bash
# Sourced by the in-job restart tests (test_restart_in_job_*.sh and
# test_race_restart_in_job_keeps_claim.sh), after lib.sh: a training program
# that checkpoints a step counter, and the wait until it is mid-training.

# write_step_program: program.sh in the test folder. Rank 0 checkpoints the
# step it reached in the folder ddpctl hands it (DDPCTL_CHECKPOINT_DIR/ckpt,
# the run's own, which ddpctl made at submit; rank 0 writes its path to
# ckpt_dir.<restart>); each step resumes from it. Step 0
# (DDPCTL_RESTART=0) never ends by itself, so a kill always lands
# mid-training; a restarted step trains 3 steps more and ends. Each rank
# writes "PID HOST JOB" to pid.<restart>.<rank> and says where it starts:
# "restart R rank N of job ID on HOST master ADDR:PORT from step S".
write_step_program() {
  cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")
ckpt=$DDPCTL_CHECKPOINT_DIR/ckpt
[ -d "$DDPCTL_CHECKPOINT_DIR" ] || { echo "no checkpoint folder: '$DDPCTL_CHECKPOINT_DIR'" >&2; exit 3; }
[ "$NODE_RANK" != 0 ] || echo "$DDPCTL_CHECKPOINT_DIR" >"$dir/ckpt_dir.$DDPCTL_RESTART"
step=$(cat "$ckpt" 2>/dev/null || echo 0)
echo "restart $DDPCTL_RESTART rank $NODE_RANK of job $SLURM_JOB_ID on $(hostname) master $MASTER_ADDR:$MASTER_PORT from step $step"
echo "$$ $(hostname) $SLURM_JOB_ID" >"$dir/pid.$DDPCTL_RESTART.$NODE_RANK.tmp"
mv "$dir/pid.$DDPCTL_RESTART.$NODE_RANK.tmp" "$dir/pid.$DDPCTL_RESTART.$NODE_RANK"
last=$((DDPCTL_RESTART == 0 ? 1000000 : step + 3))
while [ "$step" -lt "$last" ]; do
  sleep 0.2
  step=$((step + 1))
  if [ "$NODE_RANK" = 0 ]; then echo "$step" >"$ckpt.tmp" && mv "$ckpt.tmp" "$ckpt"; fi
done
echo "rank $NODE_RANK done at step $step"
SH
  chmod +x program.sh
}

# wait_mid_training RANK [WHAT]: until step 0's rank RANK runs and rank 0 has
# checkpointed step 3; WHAT names the job(s) in the failure's report.
wait_mid_training() {
  local deadline=$((SECONDS + 120)) ckpt
  while :; do
    ckpt=$(cat ckpt_dir.0 2>/dev/null || true)/ckpt
    [ -s "pid.0.$1" ] && [ -s "$ckpt" ] && [ "$(cat "$ckpt")" -ge 3 ] && break
    [ "$SECONDS" -lt "$deadline" ] || fail "${2:-the job} did not train within 120 s$(jobs_report)"
    sleep 0.2
  done
}

# submit_until_mid_training: submits job.yaml (written by the test) and waits
# until step 0 trains mid-way; sets id (the job's), node and node0 (rank 1's
# and rank 0's nodes) and rank1_pid.
# shellcheck disable=SC2034  # the variables are the sourcing test's
submit_until_mid_training() {
  run submit job.yaml
  expect_code 0
  id=$(submitted_job_id)
  wait_mid_training 1 "job $id"
  read -r rank1_pid node _ <pid.0.1
  read -r _ node0 _ <pid.0.0
}

# expect_one_attempt ID: sacct has one attempt of job ID: it never left the queue.
expect_one_attempt() {
  local attempts
  attempts=$(on_login sacct -n -X -P --duplicates -j "$1" -o State | wc -l)
  [ "$attempts" -eq 1 ] || fail "sacct shows $attempts attempts of job $1: $(on_login sacct -X --duplicates -j "$1" 2>&1)"
}
