#!/usr/bin/env bash
# `report SWEEP` of a grid: one column per grid key, each cell's final
# val_loss from the spec's metric: pattern over its rank-0 log (the LAST
# match: each cell first prints a worse one), mean ± std over the seed axis
# (env.SEED, found by its name), and the best row and cell by val_loss:min.
# While cells run or wait on the array's %2, the report shows their state and
# no metric.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# val_loss = (LR - 0.2)^2 + SEED/100: LR 0.2 is best (0.015 ± 0.0071 over the
# seeds), its seed 1 the best cell (0.01).
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 200M
command: 'echo "val_loss=9.5 (epoch 1)"; while [ ! -e $T/finish ]; do sleep 0.2; done; awk -v lr="\$DDPCTL_GRID_LR" -v s="\$DDPCTL_GRID_SEED" "BEGIN { printf \"epoch 2 val_loss=%.4f\\\\n\", (lr - 0.2) ^ 2 + s / 100 }"'
metric: 'val_loss=(?P<val_loss>[0-9.eE+-]+)'
grid:
  env.LR: ["0.1", "0.2", "0.4"]
  env.SEED: [1, 2]
  max_parallel: 2
YAML
run sweep grid.yaml
expect_code 0
expect_out "6 cell(s), --array=0-5%2"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")

# Two cells run and four wait: each shows its state, none a metric yet.
deadline=$((SECONDS + 90))
while :; do
  run report "$sweep" --seed-key none --best val_loss:min
  [ "$(grep -c ' RUNNING ' "$T/out")" = 2 ] && [ "$(grep -c ' PENDING ' "$T/out")" = 4 ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "expected 2 cells RUNNING and 4 PENDING in the report:
$(cat "$T/out" "$T/err")"
  sleep 0.5
done
expect_code 0
expect_out "6 cells: 2 running, 4 pending (throttled %2)"
grep -Eq "^  LR +SEED +TASK +STATE +VAL_LOSS$" "$T/out" || fail "the header is not LR SEED TASK STATE VAL_LOSS: $(cat "$T/out")"
running_rows=$(grep ' RUNNING ' "$T/out" || true)
grep -q 'RUNNING  *-$' <<<"$running_rows" || fail "a running cell shows a metric: $(cat "$T/out")"
expect_out "best by val_loss (min): no COMPLETED cell has val_loss yet"

touch "$T/finish"
deadline=$((SECONDS + 180))
while :; do
  run report "$sweep" --best val_loss:min
  grep -q "6 cells: 6 done" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not end as 6 done; report:
$(cat "$T/out" "$T/err")"
  sleep 1
done
expect_code 0
expect_out "mean ± std over SEED"
grep -Eq "^  LR +N +VAL_LOSS +CELLS$" "$T/out" || fail "the grouped header is not LR N VAL_LOSS CELLS: $(cat "$T/out")"
grep -Eq "^  0\.2 +2/2 +0\.015 ± 0\.007071 +2 completed +<- best$" "$T/out" ||
  fail "LR 0.2 is not the best row with 0.015 ± 0.007071 over 2 seeds: $(cat "$T/out" "$T/err")"
grep -Eq "^  0\.4 +2/2 +0\.055 ± 0\.007071 +2 completed$" "$T/out" || fail "LR 0.4's row is wrong: $(cat "$T/out")"
expect_out "best by val_loss (min): LR=0.2: val_loss 0.015 ± 0.007071 over 2 seeds"

# Each cell on its own, as CSV: the grid's keys as columns, the best cell marked.
run report "$sweep" --seed-key none --best val_loss:min --format csv
expect_code 0
[ "$(sed -n 1p "$T/out")" = "LR,SEED,cell,task,task_job_id,state,val_loss,best" ] ||
  fail "unexpected CSV header: $(cat "$T/out")"
[ "$(grep -c ',COMPLETED,' "$T/out")" = 6 ] || fail "expected six COMPLETED cells: $(cat "$T/out")"
grep -q '^0.2,1,"LR=0.2,SEED=1",[0-9]*_2,[0-9]*,COMPLETED,0.01,1$' "$T/out" ||
  fail "cell LR=0.2,SEED=1 (task 2) is not the best with 0.01: $(cat "$T/out")"
[ "$(grep -c ',1$' "$T/out")" = 1 ] || fail "more than one best cell: $(cat "$T/out")"
grep -qF ',9.5,' "$T/out" && fail "a cell's first val_loss (9.5) was taken for its last: $(cat "$T/out")"

# JSON and an unknown metric.
run report "$sweep" --format json --best val_loss:min
expect_code 0
python3 - "$T/out" <<'PY' || fail "report --format json: $(cat "$T/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [k["name"] for k in r["keys"]] == ["LR", "SEED"], r["keys"]
assert r["seed_key"] == "SEED"
best = [g for g in r["groups"] if g["best"]]
assert len(best) == 1 and best[0]["values"] == {"LR": "0.2"}, best
assert abs(best[0]["metrics"]["val_loss"]["mean"] - 0.015) < 1e-9
PY
run report "$sweep" --best val_acc:max
expect_code 1
expect_err "val_acc': no cell has this metric; the metrics found are 'val_loss'"

# The plot: val_loss against LR, the seeds averaged (a PNG gnuplot drew).
run report "$sweep" --best val_loss:min --plot "$T/grid.png"
expect_code 0
expect_err "plot written to $T/grid.png (val_loss by LR)"
[ -s "$T/grid.png" ] || fail "report --plot wrote no picture: $(cat "$T/err")"
run report "$sweep" --plot "$T/grid.png" --x RATE
expect_code 1
expect_err "--x: 'RATE': the grid has no such key; its keys are 'LR', 'SEED'"
