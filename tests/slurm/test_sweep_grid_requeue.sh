#!/usr/bin/env bash
# A requeued array task (`<id>_<idx>`) resumes its own cell. A 2-cell grid
# with requeue: runs as one array; cell 1 is requeued twice while it trains:
# first as at its time limit (Slurm's USR1 `grace` s before it: the cell's
# script checkpoints the step and requeues the task), then by
# `scontrol requeue <id>_1` (Slurm's JobRequeue, as a node failure or a
# preemption does). Each time the task runs cell 1 again and its program
# resumes from the step it had reached, from cell 1's own folder
# (DDPCTL_CELL_DIR); cell 0 runs on untouched, never requeued; `status SWEEP`
# shows cell 1 as <id>_1 with the attempt and why, as for a single run; both
# cells end COMPLETED, and once ended the sweep asks Slurm nothing.
# Cell 1 is the array's last task, the one Slurm runs under the array's own
# job id (the meta record): its SLURM_JOB_ID names the WHOLE array to
# scontrol and scancel.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# A cell's training: resumes from the step counter in its cell's folder,
# checkpoints it every step and on USR1/TERM (then exits 75, as the bundled
# trainer does), ends when $T/finish appears. Each training is a line in
# the cell's `trainings`: cell, job id, restart count, first step.
cat >program.sh <<'SH'
#!/bin/bash
dir=$DDPCTL_CELL_DIR
step=$(cat "$dir/ckpt" 2>/dev/null || echo 0)
echo "$DDPCTL_CELL $SLURM_JOB_ID ${SLURM_RESTART_COUNT:-0} $step" >>"$dir/trainings"
echo "cell $DDPCTL_CELL (task ${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}): training from step $step of $dir/ckpt"
save() { echo "$step" >"$dir/ckpt.tmp" && mv -f "$dir/ckpt.tmp" "$dir/ckpt"; }
stop() { save; echo "cell $DDPCTL_CELL: checkpointed at step $step; stopping"; exit 75; }
trap stop USR1 TERM
while [ ! -e "$(dirname "$0")/finish" ]; do
  step=$((step + 1))
  save
  sleep 0.1 &
  wait $!
done
echo "cell $DDPCTL_CELL: done at step $step"
SH
chmod +x program.sh
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 200M
requeue: {signal: USR1, grace: 60, max_restarts: 2}
command: [$T/program.sh]
grid:
  env.LR: ["0.1", "0.2"]
YAML
run sweep grid.yaml
expect_code 0
expect_out "(2 cell(s), --array=0-1)"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")
array=$(sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' "$run_dir/ledger.json")
[ -n "$array" ] || fail "no array job id in the ledger: $(cat "$run_dir/ledger.json")"
# Each cell's own folder, from grid.json.
python3 -c 'import json, sys
for c in sorted(json.load(open(sys.argv[1]))["cells"], key=lambda c: c["index"]): print(c["dir"])' \
  "$run_dir/grid.json" >dirs || fail "no cells' folders in grid.json: $(cat "$run_dir/grid.json")"
dir0=$(sed -n 1p dirs) dir1=$(sed -n 2p dirs)
[[ -n $dir0 && -n $dir1 && $dir0 != "$dir1" ]] || fail "the cells do not have folders of their own: $(cat dirs)"

# step_of DIR: the step the cell's checkpoint holds (0: none yet).
step_of() { cat "$1/ckpt" 2>/dev/null || echo 0; }
# trainings_of DIR: how many trainings the cell has started.
trainings_of() { if [ -f "$1/trainings" ]; then wc -l <"$1/trainings"; else echo 0; fi; }
# wait_training DIR N: waits until the cell's Nth training has started and
# checkpointed a step past the one it resumed from.
wait_training() {
  local dir=$1 n=$2 deadline=$((SECONDS + 90)) first
  while :; do
    if [ "$(trainings_of "$dir")" -ge "$n" ]; then
      first=$(sed -n "${n}p" "$dir/trainings" | cut -d' ' -f4)
      [ "$(step_of "$dir")" -gt "$first" ] && return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "training $n of the cell in $dir did not start and take a step within 90 s; trainings: $(cat "$dir/trainings" 2>&1)$(jobs_report)"
    sleep 0.2
  done
}
# task_state TASK [FIELD]: "JobState=S [FIELD=V ]Restarts=N " of array task TASK.
task_state() {
  on_login scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | grep -E "^(JobState|${2:-JobState}|Restarts)=" | tr '\n' ' ' || true
}
# run_again TASK RESTART: waits until array task TASK (<id>_<idx>) runs with
# Slurm's restart count RESTART. A requeued job waits for its BeginTime (22.05:
# two minutes): it is started sooner, but not within seconds of the requeue
# (slurmd refuses a new launch of the same job id on the same node within the
# second its old credential was revoked; lib.sh's wait_for_completed_after_requeue).
run_again() {
  local task=$1 want=$2 deadline=$((SECONDS + 90)) state pending_since=""
  while :; do
    state=$(task_state "$task" Reason)
    case "$state" in
      *JobState=RUNNING*"Restarts=$want "*) return 0 ;;
      *JobState=PENDING*Reason=BeginTime*)
        pending_since=${pending_since:-$SECONDS}
        [ $((SECONDS - pending_since)) -lt 3 ] || on_login scontrol update JobId="$task" StartTime=now ;;
    esac
    [ "$SECONDS" -lt "$deadline" ] || fail "task $task did not run again as restart $want within 90 s (last: $state)$(jobs_report)"
    sleep 0.3
  done
}
# status_row TASK: the table row of `status SWEEP` (in $T/out) for that task.
status_row() { grep -E "^$sweep +$1 " "$T/out" || true; }

wait_training "$dir0" 1
wait_training "$dir1" 1
# Each task's own job id (squeue's %A), as its logs and SLURM_JOB_ID name it.
task0=$(on_login squeue -h -j "${array}_0" -o %A || true)
task1=$(on_login squeue -h -j "${array}_1" -o %A || true)
[[ -n $task0 && -n $task1 ]] || fail "squeue does not show both tasks: '$task0' '$task1'$(jobs_report)"
[ "$task1" = "$array" ] || echo "note: on Slurm $SLURM_VERSION task 1 runs as job $task1, not as the array's own id $array"
run status "$sweep"
expect_code 0
[[ $(status_row "${array}_0") == *LR=0.1*RUNNING* ]] || fail "cell LR=0.1 is not RUNNING as ${array}_0: $(cat "$T/out" "$T/err")"
[[ $(status_row "${array}_1") == *LR=0.2*RUNNING* ]] || fail "cell LR=0.2 is not RUNNING as ${array}_1: $(cat "$T/out" "$T/err")"

# 1. As at the time limit: what Slurm does `grace` s before it (--signal=B:USR1@60).
at=$(step_of "$dir1")
on_login scancel --batch --signal=USR1 "${array}_1"
deadline=$((SECONDS + 60))
until grep -q "ddpctl: requeueing job $task1 (restart 1 of 2)" "logs/${JOB_NAME}_$task1.err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "cell 1's task did not requeue itself: $(cat "logs/${JOB_NAME}_$task1.err" 2>&1)$(slurmctld_log_of "$task1")"
  sleep 0.2
done
grep -q "warning: scontrol requeue" "logs/${JOB_NAME}_$task1.err" && fail "the requeue failed: $(cat "logs/${JOB_NAME}_$task1.err")"
run_again "${array}_1" 1
# Only cell 1 was requeued: cell 0 trains on in its first attempt.
state0=$(task_state "${array}_0")
[[ $state0 == "JobState=RUNNING Restarts=0 " ]] || fail "cell 0 (${array}_0) was disturbed by cell 1's requeue: $state0$(slurmctld_log_of "$task0")"
wait_training "$dir1" 2
# It ran cell 1 again, from the step cell 1 checkpointed, read from cell 1's folder.
read -r cell job restarts from < <(sed -n 2p "$dir1/trainings")
[ "$cell $job $restarts" = "LR=0.2 $task1 1" ] || fail "the second training in cell 1's folder is not cell 1's restart 1: $(cat "$dir1/trainings")"
stopped=$(sed -n 's/^cell LR=0.2: checkpointed at step \([0-9]*\); stopping$/\1/p' "logs/${JOB_NAME}_$task1.restart0.0.out" 2>/dev/null || true)
[ -n "$stopped" ] || fail "cell 1's first attempt did not checkpoint at the stop: $(cat "logs/${JOB_NAME}_$task1.restart0.0.out")"
[[ $from == "$stopped" && $from -ge $at && $from -gt 0 ]] ||
  fail "cell 1 resumed from step $from, not from the step $stopped it checkpointed (>= $at): $(cat "$dir1/trainings")"
grep -qF "cell LR=0.2 (task ${array}_1, SLURM_RESTART_COUNT=1): training from step $from of $dir1/ckpt" "logs/${JOB_NAME}_$task1.restart1.0.out" ||
  fail "cell 1's second attempt did not resume from its own folder $dir1: $(cat "logs/${JOB_NAME}_$task1.restart1.0.out")"
grep -q "ddpctl: job $task1 .* attempt 2 on " "logs/${JOB_NAME}_$task1.out" ||
  fail "cell 1's log does not say attempt 2: $(cat "logs/${JOB_NAME}_$task1.out")"
run status "$sweep"
expect_code 0
row=$(status_row "${array}_1")
[[ $row == *LR=0.2*RUNNING*"attempt 2 of 3 (requeued at the time limit)"* ]] ||
  fail "status does not show cell LR=0.2 as ${array}_1 on its requeued attempt: $(cat "$T/out" "$T/err")"
[[ $(status_row "${array}_0") == *LR=0.1*RUNNING* && $(status_row "${array}_0") != *attempt* ]] ||
  fail "status shows cell LR=0.1 other than running on its first attempt: $(cat "$T/out")"

# 2. Slurm's JobRequeue (an admin, a node failure, a preemption): the script
# cannot act; the task is requeued all the same and resumes its cell.
at=$(step_of "$dir1")
on_login scontrol requeue "${array}_1"
run_again "${array}_1" 2
state0=$(task_state "${array}_0")
[[ $state0 == "JobState=RUNNING Restarts=0 " ]] || fail "cell 0 (${array}_0) was disturbed by cell 1's requeue: $state0"
wait_training "$dir1" 3
read -r cell job restarts from < <(sed -n 3p "$dir1/trainings")
[ "$cell $job $restarts" = "LR=0.2 $task1 2" ] || fail "the third training in cell 1's folder is not cell 1's restart 2: $(cat "$dir1/trainings")"
stopped=$(sed -n 's/^cell LR=0.2: checkpointed at step \([0-9]*\); stopping$/\1/p' "logs/${JOB_NAME}_$task1.restart1.0.out" 2>/dev/null || true)
[ -n "$stopped" ] || fail "cell 1's second attempt did not checkpoint when it was requeued: $(cat "logs/${JOB_NAME}_$task1.restart1.0.out")"
[[ $from == "$stopped" && $from -ge $at ]] ||
  fail "cell 1 resumed from step $from, not from the step $stopped it checkpointed (>= $at): $(cat "$dir1/trainings")"
grep -qF "cell LR=0.2 (task ${array}_1, SLURM_RESTART_COUNT=2): training from step $from of $dir1/ckpt" "logs/${JOB_NAME}_$task1.restart2.0.out" ||
  fail "cell 1's third attempt did not resume from its own folder: $(cat "logs/${JOB_NAME}_$task1.restart2.0.out")"
grep -q "ddpctl: job $task1 .* attempt 3 on " "logs/${JOB_NAME}_$task1.out" ||
  fail "cell 1's log does not say attempt 3: $(cat "logs/${JOB_NAME}_$task1.out")"
# Why comes from sacct's record of the earlier attempt, which slurmdbd
# writes a little after the fact (seconds on a busy machine); until then
# status says the task was requeued and that sacct does not say why yet.
deadline=$((SECONDS + 60))
while :; do
  run status "$sweep"
  expect_code 0
  row=$(status_row "${array}_1")
  [[ $row == *LR=0.2*RUNNING*"attempt 3 of 3 (requeued by scontrol requeue)"* ]] && break
  [[ $row == *LR=0.2*RUNNING*"attempt 3 of 3 (requeued; sacct has no record of the earlier attempt yet)"* ]] ||
    fail "status does not show cell LR=0.2's second requeue: $(cat "$T/out" "$T/err")"
  [ "$SECONDS" -lt "$deadline" ] || fail "status does not explain cell LR=0.2's second requeue within 60 s: $(cat "$T/out" "$T/err")$(jobs_report)"
  sleep 0.5
done

# Both cells end COMPLETED; cell 0 trained once, in its own folder only.
touch finish
wait_for_sacct "${array}_0" COMPLETED 60
wait_for_sacct "${array}_1" COMPLETED 60
if [ "$(trainings_of "$dir0")" != 1 ] || ! grep -q "^LR=0.1 $task0 0 0$" "$dir0/trainings"; then
  fail "cell 0's folder has other trainings than its one: $(cat "$dir0/trainings")"
fi
[ "$(trainings_of "$dir1")" = 3 ] || fail "cell 1 did not train exactly three times: $(cat "$dir1/trainings")"
deadline=$((SECONDS + 60))
while :; do
  run status "$sweep"
  [[ $(status_row "${array}_0") == *COMPLETED* && $(status_row "${array}_1") == *COMPLETED* ]] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status does not show both cells COMPLETED: $(cat "$T/out" "$T/err")"
  sleep 0.5
done
[[ $(status_row "${array}_1") == *LR=0.2*COMPLETED*"attempt 3 of 3 (requeued by scontrol requeue)"* ]] ||
  fail "the ended cell LR=0.2 does not say it was requeued: $(cat "$T/out")"
[[ $(status_row "${array}_0") != *attempt* ]] || fail "cell LR=0.1 says it was requeued: $(cat "$T/out")"
run status
expect_out "2 cells: 2 done"

# Ended: squeue forgets ended jobs after MinJobAge (the fake answers so at
# once; sacct is real): the cells' ends are kept in the ledger, and from then
# on status SWEEP explains the requeued cell asking Slurm nothing.
# shellcheck disable=SC2016  # expanded when the fakes run
fake_command squeue 'echo "squeue $*" >>"$CALLS"; echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1'
# shellcheck disable=SC2016
fake_command sacct 'echo "sacct $*" >>"$CALLS"; exec "$REAL" "$@"'
export CALLS="$T/calls"
: >"$CALLS"
run status "$sweep"
expect_code 0
# Each cell's end, cell 1's with its two earlier attempts (sacct --duplicates).
python3 - "$run_dir/ledger.json" <<'PY' || fail "the ledger does not keep the cells' ends with cell 1's earlier attempts: $(cat "$run_dir/ledger.json")"
import json, sys
ends = {e["job"]["array_task_id"]: e for a in json.load(open(sys.argv[1]))["attempts"] for e in a.get("task_ends", [])}
print({t: (e["job"]["state"], len(e["earlier"])) for t, e in ends.items()})
sys.exit(0 if {t: (e["job"]["state"], len(e["earlier"])) for t, e in ends.items()} == {0: ("COMPLETED", 0), 1: ("COMPLETED", 2)} else 1)
PY
[[ $(status_row "${array}_1") == *LR=0.2*COMPLETED*"attempt 3 of 3 (requeued by scontrol requeue)"* ]] ||
  fail "the ended cell LR=0.2 read from sacct does not say it was requeued: $(cat "$T/out" "$T/err")"
: >"$CALLS"
run status "$sweep"
expect_code 0
[[ $(status_row "${array}_1") == *LR=0.2*COMPLETED*"attempt 3 of 3 (requeued by scontrol requeue)"* ]] ||
  fail "the ended sweep's cell LR=0.2 does not say it was requeued: $(cat "$T/out" "$T/err")"
[[ $(status_row "${array}_0") == *LR=0.1*COMPLETED* && $(status_row "${array}_0") != *attempt* ]] ||
  fail "the ended sweep's cell LR=0.1 is not shown COMPLETED on its first attempt: $(cat "$T/out")"
[ ! -s "$CALLS" ] || fail "status of the ended sweep asked Slurm: $(cat "$CALLS")"
