#!/usr/bin/env bash
# A 2 x 2 grid of 2-node CPU jobs with max_parallel: 2 is ONE job array
# (one sbatch), never more than two cells run at once (the array's %2:
# Slurm holds the others with JobArrayTaskLimit, and sacct's start and end
# times show no third overlapping), each cell gets its values as variables
# and arguments, the one cell whose value the program rejects is explained
# by cell with its last metric (the spec's metric: pattern), `status`
# without arguments sums the sweep up in one line, and `logs SWEEP --cell
# NAME` shows (and -f follows) one cell's logs.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Each cell runs until the test has seen two running and two held back, then
# 2 s more, so that accounting's whole seconds show each cell's span.
write_spec grid.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 200M
metric: 'loss=(?P<loss>[0-9.]+)'
command: 'echo "cell \$DDPCTL_CELL lr=\$DDPCTL_GRID_LR seed=\$DDPCTL_GRID_SEED args={LR}/{SEED}"; echo "loss=0.9{SEED}"; echo "loss=0.4{SEED}"; while [ ! -e $T/finish ]; do sleep 0.2; done; sleep 2; if [ "\$DDPCTL_GRID_LR" = 0.2 ] && [ "\$DDPCTL_GRID_SEED" = 2 ]; then echo "lr 0.2 with seed 2 diverges" >&2; exit 3; fi'
grid:
  env.LR: ["0.1", "0.2"]
  env.SEED: [1, 2]
  max_parallel: 2
YAML
run sweep grid.yaml --dry-run
expect_code 0
expect_out "4 cell(s)"
expect_out "--array=0-3%2"

run sweep grid.yaml
expect_code 0
expect_out "submitted job array"
expect_out "4 cell(s), --array=0-3%2"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")
array=$(sed -n 's/.*"job_id": "\([0-9]*\)".*/\1/p' "$run_dir/ledger.json")
[ -n "$array" ] || fail "no array job id in the ledger: $(cat "$run_dir/ledger.json")"
grep -q '"array": "0-3%2"' "$run_dir/ledger.json" || fail "the ledger does not record the array: $(cat "$run_dir/ledger.json")"
# One sbatch: the ledger holds one attempt.
[ "$(grep -c '"token"' "$run_dir/ledger.json")" = 1 ] || fail "more than one sbatch attempt: $(cat "$run_dir/ledger.json")"

# Two cells run, two wait on the array's limit.
deadline=$((SECONDS + 90))
while :; do
  run status "$sweep"
  running=$(grep -c ' RUNNING ' "$T/out" || true)
  limited=$(grep -c 'PENDING.*array.s task limit' "$T/out" || true)
  [ "$running" = 2 ] && [ "$limited" = 2 ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "expected 2 cells RUNNING and 2 PENDING on the array's task limit; status:
$(cat "$T/out" "$T/err")
squeue: $(on_login squeue -h -r -j "$array" -o '%i %T %r' 2>&1)"
  sleep 0.5
done
expect_out "${array}_0"
expect_out "LR=0.1,SEED=1"
on_login squeue -h -j "$array" -o '%i %T %r' >"$T/squeue" 2>&1
grep -q "JobArrayTaskLimit" "$T/squeue" || fail "squeue shows no task held by the limit: $(cat "$T/squeue")"
run status
expect_code 0
expect_out "4 cells: 2 running, 2 pending (throttled %2)"

# A cell's logs, followed: a running cell's to its end, and a pending one's
# from when its task starts (logs -f waits for it).
"$LOCAL_SLURM" exec -- timeout 150 "$DDPCTL" logs "$sweep" --cell LR=0.1,SEED=1 -f >"$T/follow-running" 2>&1 &
follow_running=$!
"$LOCAL_SLURM" exec -- timeout 150 "$DDPCTL" logs "$sweep" --cell LR=0.2,SEED=1 -f >"$T/follow-pending" 2>&1 &
follow_pending=$!
# The pending cell's follower says it waits before the cells go on.
deadline=$((SECONDS + 30))
until grep -q "==> cell LR=0.2,SEED=1 (${array}_2) is PENDING: waiting for it to start <==" "$T/follow-pending"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "logs -f of the pending cell does not say it waits: $(cat "$T/follow-pending")"
  sleep 0.3
done
touch "$T/finish"
deadline=$((SECONDS + 180))
while :; do
  run status
  grep -q "4 cells: 3 done, 1 failed" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not end as 3 done and 1 failed; status:
$(cat "$T/out" "$T/err")
$(on_login sacct -X -P -j "$array" -o JobID,State,ExitCode 2>&1)"
  sleep 1
done
expect_out "$sweep"
run status "$sweep"
expect_code 0
expect_out "LR=0.2,SEED=2"
row=$(grep "LR=0.2,SEED=2" "$T/out" || true)
[[ $row == *FAILED* ]] || fail "cell LR=0.2,SEED=2 is not FAILED: $(cat "$T/out")"
[[ $row == *"exit code 3"* ]] || fail "cell LR=0.2,SEED=2 does not say its exit: $(cat "$T/out")"
# Each cell's last metric (the spec's metric: pattern, the last match in its log).
[[ $row == *"; loss 0.42" ]] || fail "cell LR=0.2,SEED=2 does not end its row with its last metric: $row"
row=$(grep "LR=0.1,SEED=1 " "$T/out" || true)
[[ $row == *COMPLETED*"loss 0.41" ]] || fail "cell LR=0.1,SEED=1 does not show its last metric: $(cat "$T/out")"
[ "$(grep -c ' COMPLETED ' "$T/out")" = 3 ] || fail "expected three COMPLETED cells: $(cat "$T/out")"

wait "$follow_running" || fail "logs -f of cell LR=0.1,SEED=1 failed: $(cat "$T/follow-running")"
wait "$follow_pending" || fail "logs -f of cell LR=0.2,SEED=1 failed: $(cat "$T/follow-pending")"
grep -qF "cell LR=0.1,SEED=1 lr=0.1 seed=1 args=0.1/1" "$T/follow-running" ||
  fail "logs -f of cell LR=0.1,SEED=1 did not show its output: $(cat "$T/follow-running")"
grep -qF "==> cell LR=0.1,SEED=1 (${array}_0) ended: COMPLETED <==" "$T/follow-running" ||
  fail "logs -f of cell LR=0.1,SEED=1 did not end with it: $(cat "$T/follow-running")"
grep -qF "cell LR=0.2,SEED=1 lr=0.2 seed=1 args=0.2/1" "$T/follow-pending" ||
  fail "logs -f of the pending cell did not show its output once it ran: $(cat "$T/follow-pending")"
grep -qF "==> cell LR=0.2,SEED=1 (${array}_2) ended: COMPLETED <==" "$T/follow-pending" ||
  fail "logs -f of the pending cell did not end with it: $(cat "$T/follow-pending")"

# A cell's logs by name; the sweep alone names its cells.
run logs "$sweep"
expect_code 1
expect_err "is a grid's sweep of 4 cells, each with logs of its own: --cell NAME picks one; its cells are LR=0.1,SEED=1; LR=0.1,SEED=2; LR=0.2,SEED=1; LR=0.2,SEED=2"
run logs "$sweep" --cell LR=0.3,SEED=2
expect_code 1
expect_err "has no cell 'LR=0.3,SEED=2'"
expect_err "did you mean"
run logs "$sweep" --cell LR=0.1,SEED=2
expect_code 0
expect_out "cell LR=0.1,SEED=2 lr=0.1 seed=2 args=0.1/2"
if grep -q "SEED=1 lr=" "$T/out"; then fail "logs of LR=0.1,SEED=2 show another cell's: $(cat "$T/out")"; fi
# The failed cell opens at its failing rank and says how it ended.
run logs "$sweep" --cell LR=0.2,SEED=2
expect_code 0
expect_out "==> cell LR=0.2,SEED=2 (${array}_3) ended FAILED: "
expect_out "exit code 3"
expect_out "cell LR=0.2,SEED=2 lr=0.2 seed=2 args=0.2/2"
run logs "$sweep" --cell LR=0.2,SEED=2 --rank 1
expect_code 0
expect_out "(training output, attempt 1, task 1)"

# Each cell got its own values, as variables and as arguments: its task's
# log (the task's own job id, from status --json, as %j names the log).
"$LOCAL_SLURM" exec -- "$DDPCTL" status "$sweep" --json >"$T/status.json"
python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    m, seed = r.get("metric"), r["cell"][-1]
    if not m or m["name"] != "loss" or m["value"] != float("0.4" + seed):
        sys.exit("cell %s has no metric loss 0.4%s in status --json: %s" % (r["cell"], seed, m))
    print(r["cell"], r["task_job_id"])' "$T/status.json" >"$T/tasks" || fail "status --json: $(cat "$T/status.json")"
[ "$(wc -l <"$T/tasks")" = 4 ] || fail "status --json does not list four cells: $(cat "$T/status.json")"
while read -r cell task; do
  out=$(cat logs/"${JOB_NAME}_$task".restart0.0.out 2>/dev/null || true)
  lr=${cell#LR=} seed=${cell##*SEED=}
  lr=${lr%%,*}
  want="cell $cell lr=$lr seed=$seed args=$lr/$seed"
  grep -qF "$want" <<<"$out" || fail "cell $cell (job $task) did not print '$want': $out"
done <"$T/tasks"

# Never more than two at once, from accounting's start and end times (22.05's
# sacct records an array's tasks a moment after squeue shows them ended).
for cell in 0 1 2; do wait_for_sacct "${array}_$cell" COMPLETED 60; done
wait_for_sacct "${array}_3" FAILED 60
on_login sacct -n -X -P -j "$array" -o JobID,Start,End >"$T/times"
python3 - "$T/times" <<'PY' || fail "more than two cells overlapped: $(cat "$T/times")"
import sys, datetime
events = []
for line in open(sys.argv[1]):
    job, start, end = line.strip().split("|")
    t = lambda s: datetime.datetime.fromisoformat(s).timestamp()
    events += [(t(start), 1), (t(end), -1)]
events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same second
running = peak = 0
for _, d in events:
    running += d
    peak = max(peak, running)
print("peak", peak, "of", len(events) // 2)
# Two ran together (seen above): exactly two at the peak, of four cells.
sys.exit(0 if peak == 2 and len(events) == 8 else 1)
PY

# Retry: exactly the failed cell, as one array of that index, into the same sweep.
run sweep retry "$sweep" --dry-run
expect_code 0
expect_out "would retry shape 2x1: 1 cell(s), --array=3%2: LR=0.2,SEED=2"
run sweep retry "$sweep"
expect_code 0
expect_out "shape 2x1: retrying 1 cell(s): LR=0.2,SEED=2"
expect_out "(1 cell(s), --array=3%2)"
retry_array=$(sed -n 's/.* retrying them as job array \([0-9]*\) .*/\1/p' "$T/out")
[ -n "$retry_array" ] || fail "no array id in: $(cat "$T/out")"
grep -q '"array": "3%2"' "$run_dir/ledger.json" || fail "the ledger does not record the retry's --array=3%2: $(cat "$run_dir/ledger.json")"
[ "$(find runs -mindepth 1 -maxdepth 1 -type d -name "$JOB_NAME-*" | wc -l)" = 1 ] || fail "the retry made a run folder of its own: $(ls runs)"
deadline=$((SECONDS + 120))
while :; do
  run status "$sweep"
  row=$(grep "LR=0.2,SEED=2" "$T/out" || true)
  [[ $row == *"${retry_array}_3 "*FAILED* ]] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the retried cell did not end as ${retry_array}_3 FAILED: $(cat "$T/out" "$T/err")"
  sleep 1
done
[ "$(grep -c "${array}_[012] .*COMPLETED" "$T/out")" = 3 ] || fail "the three done cells are not shown as before: $(cat "$T/out")"
on_login squeue -h -t all -r -j "$retry_array" -o '%K' >"$T/retried" 2>&1 || true
[ "$(sort -u "$T/retried" | tr -d ' \n')" = 3 ] || fail "the retry array ran other tasks than 3: $(cat "$T/retried")"
run sweep retry "$sweep" --cells 'LR=0.1,SEED=1;LR=0.3,SEED=1'
expect_code 1
expect_err "no cell 'LR=0.3,SEED=1'"

# Ended: the cells' ends are kept in the ledger, and status asks Slurm nothing
# more. squeue keeps ended jobs for MinJobAge (300 s), then answers for them
# as for any id it does not know: the fake answers so at once; sacct is real.
wait_for_sacct "${retry_array}_3" FAILED 60
# shellcheck disable=SC2016  # expanded when the fakes run
fake_command squeue 'echo "squeue $*" >>"$CALLS"; echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1'
# shellcheck disable=SC2016
fake_command sacct 'echo "sacct $*" >>"$CALLS"; exec "$REAL" "$@"'
export CALLS="$T/calls"
: >"$CALLS"
run status
expect_code 0
expect_out "4 cells: 3 done, 1 failed"
grep -q '"task_ends"' "$run_dir/ledger.json" || fail "no cell's end in the ledger: $(cat "$run_dir/ledger.json")"
[ "$(grep -c '^sacct' "$CALLS")" -le 1 ] || fail "status asked sacct more than once: $(cat "$CALLS")"
: >"$CALLS"
run status
expect_out "4 cells: 3 done, 1 failed"
run status "$sweep"
expect_out "LR=0.2,SEED=2"
[ ! -s "$CALLS" ] || fail "status of the ended sweep asked Slurm: $(cat "$CALLS")"
