#!/usr/bin/env bash
# A grid of more cells than the site's MaxArraySize (1001 on the local
# clusters, scontrol show config) goes in two arrays: tasks 0-1000, then one
# task that runs cell 1001 (its offset passed to the array script). The
# cells are held (hold: true: squeue shows JobHeldUser), status reads the
# 1001-task collapsed record whole, the second array's task runs its own
# cell once released, and cancel stops the rest.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
max=$(on_login scontrol show config | sed -n 's/^MaxArraySize *= *//p')
[ "$max" = 1001 ] || fail "this test expects MaxArraySize 1001, the cluster has '$max'"
{
  cat <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 50M
hold: true
command: 'echo "cell \$DDPCTL_CELL I=\$I"'
YAML
  printf 'grid:\n  env.I: ['
  seq -s ', ' 0 1001 | tr -d '\n'
  printf ']\n'
} | write_spec grid.yaml
run sweep grid.yaml
expect_code 0
expect_out "--array=0-1000, cells 0-1000 (MaxArraySize 1001: task N is cell N+0)"
expect_out "(1 cell(s), --array=0, cells 1001-1001 (MaxArraySize 1001: task N is cell N+1001)"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")
grep -q '"array_offset": 1001' "$run_dir/ledger.json" || fail "no array_offset in the ledger: $(cat "$run_dir/ledger.json")"
second=$(sed -n 's/.*submitted job array \([0-9]*\) (1 cell(s).*/\1/p' "$T/out")
[ -n "$second" ] || fail "no second array id in: $(cat "$T/out")"
on_login squeue -h -j "$second" -o '%i %T %r' >"$T/squeue" 2>&1
grep -q "JobHeldUser" "$T/squeue" || fail "the cells are not held: $(cat "$T/squeue")"
run status
expect_code 0
expect_out "1002 cells: 1002 pending"
run status "$sweep"
expect_out "${second}_0"
row=$(grep "${second}_0 " "$T/out" || true)
[[ $row == *"I=1001"* ]] || fail "task 0 of the second array is not cell I=1001: $(grep "${second}_" "$T/out")"
# Released, the second array's task 0 runs cell 1001's script.
on_login scontrol release "$second"
deadline=$((SECONDS + 90))
while :; do
  run status "$sweep"
  row=$(grep "I=1001 " "$T/out" || true)
  [[ $row == *COMPLETED* ]] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "cell I=1001 did not complete: $(grep "I=1001 " "$T/out") $(cat "$T/err")"
  sleep 0.5
done
task=$(python3 -c 'import json, sys
print([r["task_job_id"] for r in json.loads(sys.stdin.read())["rows"] if r["cell"] == "I=1001"][0])' \
  <<<"$("$LOCAL_SLURM" exec -- "$DDPCTL" status "$sweep" --json)")
grep -q "cell I=1001 I=1001" "logs/${JOB_NAME}_$task.restart0.0.out" ||
  fail "the task did not run cell 1001: $(cat "logs/${JOB_NAME}_$task.restart0.0.out" 2>&1)"
run cancel "$sweep"
expect_code 0
[ -z "$(own_live_jobs)" ] || fail "jobs still live after cancel: $(own_live_jobs)"
