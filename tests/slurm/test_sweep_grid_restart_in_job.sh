#!/usr/bin/env bash
# A grid of two 1-node cells (one job array, SLURM_ARRAY_TASK_ID 0 and 1) with restart: {in_job: 1,
# spares: 1}: each array task gets its node and a spare. Cell 0's rank is
# killed with SIGKILL; its task restarts inside its own allocation (its node
# left out, its spare taken) and completes; cell 1, another task of the same
# array, runs on untouched. status explains the restart on cell 0's row.
# Each cell keeps its checkpoint in its own folder ddpctl hands it
# (DDPCTL_CHECKPOINT_DIR: <cell's folder>/checkpoint, made at submit).
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")/cell.$SLURM_ARRAY_TASK_ID
mkdir -p "$dir"
ckpt=$DDPCTL_CHECKPOINT_DIR/ckpt
[ -d "$DDPCTL_CHECKPOINT_DIR" ] || { echo "no checkpoint folder: '$DDPCTL_CHECKPOINT_DIR'" >&2; exit 3; }
echo "$DDPCTL_CHECKPOINT_DIR" >"$dir/ckpt_dir.$DDPCTL_RESTART"
step=$(cat "$ckpt" 2>/dev/null || echo 0)
echo "cell $SLURM_ARRAY_TASK_ID ($DDPCTL_CELL) restart $DDPCTL_RESTART of job $SLURM_JOB_ID on $(hostname) from step $step"
echo "$$ $(hostname) $SLURM_JOB_ID ${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID" >"$dir/pid.$DDPCTL_RESTART.tmp"
mv "$dir/pid.$DDPCTL_RESTART.tmp" "$dir/pid.$DDPCTL_RESTART"
last=$((DDPCTL_RESTART == 0 && SLURM_ARRAY_TASK_ID == 0 ? 1000000 : step + 3))
while [ "$step" -lt "$last" ]; do
  sleep 0.2
  step=$((step + 1))
  echo "$step" >"$ckpt.tmp" && mv "$ckpt.tmp" "$ckpt"
done
echo "cell $SLURM_ARRAY_TASK_ID done at step $step"
SH
chmod +x program.sh
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
restart: {in_job: 1, spares: 1}
command: [$T/program.sh]
grid:
  env.SEED: [1, 2]
YAML
run sweep grid.yaml
expect_code 0
expect_out "submitted job array"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")
deadline=$((SECONDS + 120))
until [ -s cell.0/pid.0 ] && [ -s "$(cat cell.0/ckpt_dir.0 2>/dev/null)/ckpt" ] && [ "$(cat "$(cat cell.0/ckpt_dir.0)/ckpt")" -ge 3 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "cell 0 did not train within 120 s$(jobs_report)"
  sleep 0.2
done
# The task's own job id names its logs; sacct is asked by ARRAY_TASK (the
# first task's job id is the array's, which sacct takes for every task).
read -r pid node task array_task <cell.0/pid.0
kill -KILL "$pid"
wait_for_sacct "$array_task" COMPLETED 120
read -r _ new _ <cell.0/pid.1 || fail "cell 0 did not start again: $(ls cell.0)"
[ "$new" != "$node" ] || fail "cell 0 started again on its killed rank's node $node"
grep -qE "^cell 0 \(SEED=1\) restart 1 of job $task on $new from step ([3-9]|[1-9][0-9]+)$" logs/*_"$task".restart0.0.out ||
  fail "cell 0's restarted step did not resume in its own job: $(cat logs/*_"$task".restart0.0.out)"
grep -qE "^ddpctl: restart 1 of 1 in the job: rank 0 on $node was killed \(signal 9\); $node left out, spare $new taken$" \
  logs/*_"$task".err || fail "cell 0's task did not restart in its job$(job_logs_of "$task")"
read -r _ _ _ other <cell.1/pid.0 || fail "cell 1 did not run: $(ls cell.1)"
wait_for_sacct "$other" COMPLETED 120
[ ! -e cell.1/pid.1 ] || fail "cell 1 restarted though nothing failed in it"
# Each cell's checkpoint folder is <its folder>/checkpoint (grid.json), kept across the restart.
python3 -c 'import json, sys
for c in sorted(json.load(open(sys.argv[1]))["cells"], key=lambda c: c["index"]): print(c["dir"] + "/checkpoint")' \
  "$run_dir/grid.json" >want || fail "no cells' folders in grid.json: $(cat "$run_dir/grid.json")"
for f in cell.0/ckpt_dir.0 cell.0/ckpt_dir.1; do
  [ "$(cat "$f")" = "$(sed -n 1p want)" ] || fail "cell 0's DDPCTL_CHECKPOINT_DIR ($f) is '$(cat "$f")', not $(sed -n 1p want)"
done
[ "$(cat cell.1/ckpt_dir.0)" = "$(sed -n 2p want)" ] || fail "cell 1's DDPCTL_CHECKPOINT_DIR is '$(cat cell.1/ckpt_dir.0)', not $(sed -n 2p want)"
run status "$sweep"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out_re "SEED=1 .*COMPLETED .*restart 1 of 1 in the job: rank 0 on $node was killed \(signal 9\); $node left out, spare $new taken"
