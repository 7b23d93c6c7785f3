#!/usr/bin/env bash
# A torchrun program ddpctl did not write shows its progress in status, and
# its throughput in report, through the spec's progress: pattern applied to
# rank 0's log. The program pauses mid-epoch until the test has looked.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
need_torchrun
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 2
progress:
  pattern: 'Epoch \[(?<epoch>\d+)/(?<epochs>\d+)\] Step \[(?<step>\d+)/(?<steps>\d+)\] Loss: (?<loss>[\d.]+) Throughput: (?<samples_per_s>[\d.]+) img/s'
command: >-
  $torchrun --nnodes="\$NNODES" --node_rank="\$NODE_RANK" --nproc_per_node="\$NPROC_PER_NODE"
  --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT" --redirects 2 --tee 2
  $DDPCTL_SOURCE/tests/trainer/torchrun_program.py --epochs 2 --steps 20 --pause-file $T/go
YAML
at_exit "touch $T/go"
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
log=logs/${JOB_NAME}_$id.restart0.0.out
deadline=$((SECONDS + 120))
until grep -q "Step \[10/20\]" "$log" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the program did not reach step 10 within 120 s: $(cat "$log" logs/*.err 2>&1)"
  sleep 0.2
done
run status "$JOB_NAME"
expect_code 0
echo "status: $(cat "$T/out")"
loss=$(sed -n 's/.*Step \[10\/20\] Loss: \([0-9.]*\) .*/\1/p' "$log")
grep -qE " RUNNING .* epoch 1/2 \[#####-----\] 10/20 loss [0-9.]+ [0-9]+ img/s ETA [0-9hms]+(; (CPU [0-9]+% )?RSS [0-9.]+ [MG]iB)?$" "$T/out" ||
  fail "status shows no progress from the pattern: $(cat "$T/out")"
run status "$JOB_NAME" --json
expect_out '"step": 10'
expect_out '"steps": 20'
expect_out "\"source\": \"$T/$log\""
python3 -c "import json,sys; d=json.load(open('$T/out')); p=d['rows'][0]['progress']; sys.exit(0 if abs(p['loss'] - $loss) < 1e-3 else 1)" ||
  fail "the loss in status is not the log's $loss: $(cat "$T/out")"
touch "$T/go"
wait_for_state "$JOB_NAME" COMPLETED 120
run report "$JOB_NAME"
expect_code 0
echo "report: $(cat "$T/out")"
last=$(sed -n 's/.*Epoch \[2\/2\] Step \[20\/20\] .* Throughput: \([0-9.]*\) img\/s/\1/p' "$log")
[ -n "$last" ] || fail "no last line in $log: $(cat "$log")"
grep -qE "^1x2 +$JOB_NAME-[^ ]+ +in place +$id +COMPLETED +2 +0 +2/2 +[0-9.]+/- +$last " "$T/out" ||
  fail "report does not show epoch 2's throughput $last from the log: $(cat "$T/out")"
