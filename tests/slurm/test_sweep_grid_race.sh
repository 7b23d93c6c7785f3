#!/usr/bin/env bash
# Race, then sweep (docs/race.md): a 2 x 2 grid with `alternatives:` races its
# first cell on both shapes; the shape that cannot start (held: JobHeldUser)
# loses to the one that can, whose job trains the first cell and submits the
# other three cells from inside the job as ONE array on its own shape. Status
# shows the race and the cells waiting for it, then every cell done on the
# winning shape; the loser never gets a node; an ended sweep asks Slurm
# nothing.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec grid.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 200M
command: 'echo "cell $DDPCTL_CELL lr=$DDPCTL_GRID_LR seed=$DDPCTL_GRID_SEED on partition $SLURM_JOB_PARTITION"'
alternatives:
  - {partition: a100-80gb, label: a100}
grid:
  env.LR: ["0.1", "0.2"]
  env.SEED: [1, 2]
  max_parallel: 2
YAML
run sweep grid.yaml --dry-run
expect_code 0
expect_out "would race cell LR=0.1,SEED=1 on shapes 1x1, a100"
expect_out "--array=1-3%2"

# Both shapes' jobs are held at submission (sbatch --hold); the test starts
# only the cpu shape's, so the a100 shape cannot start.
hold_submissions
run sweep grid.yaml
expect_code 0
expect_out "racing cell LR=0.1,SEED=1 as job"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")
cpu_job=$(cat "$run_dir/race/jobs/1x1")
a100_job=$(cat "$run_dir/race/jobs/a100")
if [ -z "$cpu_job" ] || [ -z "$a100_job" ]; then fail "the race's jobs are not recorded: $(ls -R "$run_dir/race")"; fi
expect_jobs_held
grep -q '"array": "0"' "$run_dir/ledger.json" || fail "the race's jobs are not one-task arrays: $(cat "$run_dir/ledger.json")"

run status "$sweep"
expect_code 0
expect_out "races shapes 1x1 (job $cpu_job), a100 (job $a100_job)"
[ "$(grep -c ' WAITING ' "$T/out")" = 3 ] || fail "expected three cells WAITING for the race: $(cat "$T/out")"
run status
expect_out "4 cells: 1 pending, 3 waiting for the race"

# From now on sbatch is the real one (the winner's job submits the array).
rm "$T/fakebin/sbatch"
on_login scontrol release "$cpu_job"
deadline=$((SECONDS + 180))
while :; do
  run status "$sweep"
  [ "$(grep -c ' COMPLETED ' "$T/out")" = 4 ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not complete on the winning shape; status:
$(cat "$T/out" "$T/err")
ledger: $(cat "$run_dir/ledger.json")
logs: $(tail -n 5 logs/* 2>&1)"
  sleep 1
done
expect_out "race won by shape 1x1 (job $cpu_job)"
# Three attempts: the two racing jobs and the array of the other cells.
[ "$(grep -c '"token"' "$run_dir/ledger.json")" = 3 ] || fail "expected 3 sbatch attempts: $(cat "$run_dir/ledger.json")"
grep -q '"array": "1-3%2"' "$run_dir/ledger.json" || fail "the other cells were not one array 1-3%2: $(cat "$run_dir/ledger.json")"
grep -rq "won generation 1" logs/ || fail "the winner's log does not say it won: $(cat logs/*.out 2>&1)"
# Every cell ran, on the winning shape's partition.
for cell in LR=0.1,SEED=1 LR=0.1,SEED=2 LR=0.2,SEED=1 LR=0.2,SEED=2; do
  lr=${cell#LR=}
  lr=${lr%,*}
  seed=${cell#*SEED=}
  grep -rqx "cell $cell lr=$lr seed=$seed on partition cpu" logs/ ||
    fail "cell $cell did not run on partition cpu: $(cat logs/*.out 2>&1)"
done
[ -f "$run_dir/race/cancelled.$a100_job" ] || fail "the winner did not cancel the held shape's job $a100_job: $(ls "$run_dir/race")"
wait_for_sacct "$a100_job" CANCELLED
[ "$(on_login sacct -n -X -j "$a100_job" -o AllocNodes | tr -d ' ')" = 0 ] || fail "the losing shape's job $a100_job was given nodes"

run sweep retry "$sweep" --dry-run
expect_code 0
expect_out "no cell to retry"

# The first cell retried by name runs on the winning shape as a plain cell:
# the race it won is not claimed again (it would stand down).
run sweep retry "$sweep" --cells "LR=0.1,SEED=1"
expect_code 0
expect_out "retrying them as job array"
deadline=$((SECONDS + 120))
until [ "$(grep -rhx "cell LR=0.1,SEED=1 lr=0.1 seed=1 on partition cpu" logs/ | wc -l)" = 2 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the retried first cell did not train again: $(tail -n 5 logs/*.out logs/*.err 2>&1)"
  sleep 0.5
done
grep -rq "stood down\|standing down" logs/ && fail "a job stood down: $(grep -r "stand" logs/)"
deadline=$((SECONDS + 120))
while :; do
  run status "$sweep"
  [ "$(grep -c ' COMPLETED ' "$T/out")" = 4 ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the retried cell did not complete: $(cat "$T/out" "$T/err")"
  sleep 0.5
done

# Ended. squeue keeps ended jobs for MinJobAge (300 s), then answers for
# them as for an unknown id: the fake answers so at once (sacct is real).
# One status records the cells' and the loser's ends from sacct; after that
# status asks Slurm nothing.
# Accounting is written behind the controller (22.05 first records a short
# job as "allocation", without its array task): wait until sacct has the
# five cell runs as their array tasks.
arrays=$(sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' "$run_dir/ledger.json" | tail -n 2)
array_job=$(head -n 1 <<<"$arrays")
retry_job=$(tail -n 1 <<<"$arrays")
want=$(printf '%s\n' "${cpu_job}_0|COMPLETED" "${array_job}_1|COMPLETED" "${array_job}_2|COMPLETED" "${array_job}_3|COMPLETED" "${retry_job}_0|COMPLETED" | sort)
deadline=$((SECONDS + 60))
until [ "$(on_login sacct -n -X -P -o JobID,State -j "$cpu_job,$array_job,$retry_job" | sort)" = "$want" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "sacct does not show the five cell runs COMPLETED as array tasks: $(on_login sacct -X -P -o JobID,JobName,State -j "$cpu_job,$array_job,$retry_job" 2>&1)"
  sleep 0.5
done
export CALLS="$T/calls"
# shellcheck disable=SC2016  # expanded when the fakes run
fake_command squeue 'echo "squeue $*" >>"$CALLS"; echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1'
for c in sacct sbatch scontrol; do
  # shellcheck disable=SC2016
  fake_command "$c" 'echo "$(basename "$0") $*" >>"$CALLS"; exec "$REAL" "$@"'
done
run status "$sweep"
expect_code 0
grep -q "^sacct" "$CALLS" || fail "status did not read the ended cells from sacct: $(cat "$CALLS")"
cp "$T/out" first-status.out
: >"$CALLS"
run status "$sweep"
expect_code 0
[ "$(grep -c ' COMPLETED ' "$T/out")" = 4 ] || fail "the ended sweep's cells are not shown COMPLETED: $(cat "$T/out" "$T/err")
calls: $(cat "$CALLS")
the status before: $(cat first-status.out)
ledger: $(cat "$run_dir/ledger.json")"
expect_out "race won by shape 1x1 (job $cpu_job)"
[ ! -s "$CALLS" ] || fail "status of the ended sweep called Slurm: $(cat "$CALLS")"
