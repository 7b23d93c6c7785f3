#!/usr/bin/env bash
# A grid over the shape (nodes) and a parameter (env.LR): `report SWEEP` keeps
# its table by parameter and adds a scaling table per LR, each against its
# own one-node cell, every row from its task's metrics file (written here
# through $DDPCTL_METRICS_FILE by a program of the user's own, its
# throughput that of its world size and LR) and Slurm's record of the task.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
cat >"$T/trainer.sh" <<'SH'
#!/bin/bash
# img/s: 100 per rank at LR 0.1, 90 at LR 0.2; one rank writes the file.
[ "${SLURM_PROCID:-0}" = 0 ] || exit 0
per_rank=$([ "$DDPCTL_GRID_LR" = 0.1 ] && echo 100 || echo 90)
thr=$((per_rank * WORLD_SIZE))
echo "{\"epoch\": 1, \"epochs\": 2, \"img_per_s\": 10.0, \"epoch_s\": 1.0, \"train_loss\": 2.5, \"val_loss\": 2.5}" >>"$DDPCTL_METRICS_FILE"
echo "{\"epoch\": 2, \"epochs\": 2, \"img_per_s\": $thr.0, \"epoch_s\": 1.0, \"train_loss\": 1.5, \"val_loss\": 1.$WORLD_SIZE}" >>"$DDPCTL_METRICS_FILE"
SH
chmod +x "$T/trainer.sh"
write_spec grid.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 200M
command: [$T/trainer.sh]
grid:
  nodes: [1, 2]
  env.LR: ["0.1", "0.2"]
  max_parallel: 2
YAML
run sweep grid.yaml
expect_code 0
expect_out "shape 1x1: submitted job array"
expect_out "shape 2x1: submitted job array"
run_dir=$(only_run_dir)
sweep=$(basename "$run_dir")

deadline=$((SECONDS + 180))
while :; do
  run report "$sweep"
  grep -q "4 cells: 4 done" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "the sweep did not end as 4 done; report:
$(cat "$T/out" "$T/err")"
  sleep 1
done
expect_code 0
# The table by parameter first, as for any grid.
grep -Eq "^  NODES +LR +TASK +STATE +VAL_LOSS" "$T/out" || fail "no table by parameter first: $(cat "$T/out")"
expect_out "scaling at LR=0.1"
expect_out "scaling at LR=0.2"
# Per LR, the 2-node cell against the 1-node one: 200/100 and 180/90, 2.00x and 100%.
python3 - "$T/out" <<'PY' || fail "the scaling tables are wrong: $(cat "$T/out")"
import re, sys
text = open(sys.argv[1]).read()
parts = text.split("\nscaling at ")
assert len(parts) == 3, parts
for part, lr, thr in ((parts[1], "LR=0.1", "200.0"), (parts[2], "LR=0.2", "180.0")):
    assert part.startswith(lr + "\n"), part[:40]
    rows = [l for l in part.splitlines() if re.match(r"^(1x1|2x1) ", l)]
    assert len(rows) == 2, part
    assert re.search(r"\b1\.00x\b", rows[0]) and " COMPLETED " in rows[0], rows[0]
    assert thr in rows[1] and re.search(r"\b2\.00x +100%", rows[1]) and " COMPLETED " in rows[1], rows[1]
print("two scaling tables, each against its own 1-node cell")
PY

run report "$sweep" --format json
expect_code 0
python3 - "$T/out" <<'PY' || fail "report --format json: $(cat "$T/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [k["name"] for k in r["keys"]] == ["nodes", "LR"], r["keys"]
assert len(r["cells"]) == 4
scaling = r["scaling"]
assert [t["values"] for t in scaling] == [{"LR": "0.1"}, {"LR": "0.2"}], scaling
for t, thr in zip(scaling, (200.0, 180.0)):
    one, two = t["rows"]
    assert (one["nodes"], two["nodes"]) == (1, 2), t["rows"]
    assert two["img_per_s"] == thr and abs(two["speedup"] - 2.0) < 1e-9, two
    assert two["state"] == "COMPLETED" and two["wall_source"] == "slurm", two
    assert "_" in two["job"], two["job"]  # the task as Slurm shows it
    assert two["metrics"].endswith(".metrics.jsonl") and open(two["metrics"]).read().count("\n") == 2, two
PY
run report "$sweep" --format csv
expect_code 0
expect_err "the CSV is the table by parameter; the scaling tables per combination of the keys that do not set the shape are in --format table, markdown or json"
[ "$(sed -n 1p "$T/out" | cut -d, -f1-2)" = "nodes,LR" ] || fail "the CSV is not the table by parameter: $(cat "$T/out")"
