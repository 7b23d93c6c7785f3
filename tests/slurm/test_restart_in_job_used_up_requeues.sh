#!/usr/bin/env bash
# restart: {in_job: 1, spares: 1} with requeue:: rank 1 is SIGKILLed, the
# step restarts in the job on the spare; rank 1 is SIGKILLed again, and with
# the in-job restarts used up the job falls back to the requeue, leaving the
# last failed rank's node out (ExcNodeList). Its second attempt trains and
# completes; status says why it was requeued.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The first attempt's steps never end by themselves; the second's trains 3 steps.
cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")
attempt=${SLURM_RESTART_COUNT:-0}  # Slurm sets it from the first requeue on
at=$attempt.$DDPCTL_RESTART.$NODE_RANK
echo "attempt $attempt restart $DDPCTL_RESTART rank $NODE_RANK on $(hostname)"
echo "$$ $(hostname)" >"$dir/pid.$at.tmp"
mv "$dir/pid.$at.tmp" "$dir/pid.$at"
step=0
last=$((attempt == 0 ? 1000000 : 3))
while [ "$step" -lt "$last" ]; do
  sleep 0.2
  step=$((step + 1))
done
echo "rank $NODE_RANK done"
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
restart: {in_job: 1, spares: 1}
requeue: {max_restarts: 1, grace: 30}
command: [$T/program.sh]
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
# kill_rank1 RESTART: SIGKILLs rank 1 of that in-job restart's step once it runs; prints its node.
kill_rank1() {
  local deadline=$((SECONDS + 120)) pid node
  until [ -s "pid.0.$1.1" ] && [ -s "pid.0.$1.0" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "step $1 did not start within 120 s$(job_logs_of "$id")$(jobs_report)"
    sleep 0.2
  done
  read -r pid node <"pid.0.$1.1"
  kill -KILL "$pid"
  echo "$node"
}
first=$(kill_rank1 0)
second=$(kill_rank1 1)
[ "$second" != "$first" ] || fail "restart 1 ran rank 1 on $first again"
wait_for_completed_after_requeue "$id" 180
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: restart 1 of 1 in the job: rank 1 on $first was killed (signal 9); $first left out, spare $second taken" \
  "logs/${JOB_NAME}_$id.err" || fail "the first kill was not restarted in the job$(job_logs_of "$id")"
grep -qF "ddpctl: requeueing job $id (restart 1 of 1): because rank 1 on $second was killed (signal 9); in-job restarts used up (1 of 1); requeueing the job without $second" \
  "logs/${JOB_NAME}_$id.err" || fail "the second kill did not fall back to the requeue$(job_logs_of "$id")"
on_login scontrol show job -o "$id" >"$T/job"
grep -qE "ExcNodeList=$second( |$)" "$T/job" || fail "$second is not excluded: $(cat "$T/job")"
if grep -q "on $second$" "logs/${JOB_NAME}_$id.restart1."*.out; then fail "the second attempt ran on $second"; fi
grep -q "rank 1 done" "logs/${JOB_NAME}_$id.restart1.1.out" || fail "the second attempt did not train: $(ls logs)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "attempt 2 of 2 (requeued because rank 1 on $second was killed (signal 9); in-job restarts used up (1 of 1)"
