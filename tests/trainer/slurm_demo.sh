#!/usr/bin/env bash
# The README's first command, scripts/demo, as a new user runs it: its
# steps (`scripts/demo --steps-only`: the cluster is up and the build there)
# from a folder that .gitignore ignores inside a git work tree, as demo/ is
# in ddpctl's own tree. It once failed at its first submit (the snapshot's
# git add refused the ignored folder) and nothing ran it. The bundled trainer
# learns the generated dataset as 2 nodes x 2 workers: every rank joins,
# replicas end identical, the metrics and the progress file end as done,
# `status --watch` ends at COMPLETED and `report` prints the run.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}" "${MAKE_TINY_IMAGENET:?}"
# A git work tree whose demo/ is ignored, with a commit (the snapshot's).
mkdir repo
git -C repo init -q
printf 'demo/\n' >repo/.gitignore
echo 'print("hello")' >repo/train.py
git -C repo add -A
git -C repo -c user.name=t -c user.email=t@example.org commit -qm one
demo=$T/repo/demo
set +e
DDPCTL_DEMO_DIR=$demo BUILD_DIR=$(dirname "$(dirname "$DDPCTL")") DDPCTL_RUNS='' \
  "$DDPCTL_SOURCE/scripts/demo" --steps-only >demo.out 2>&1
code=$?
set -e
[ "$code" = 0 ] || fail "scripts/demo --steps-only exited with status $code:"$'\n'"$(cat demo.out)"$'\n'"$(jobs_report)"
grep -q "^== ddpctl report local-tinyimagenet" demo.out || fail "the demo did not reach its report: $(cat demo.out)"
grep -Eq "COMPLETED" demo.out || fail "status --watch did not end at COMPLETED: $(cat demo.out)"
# The run was snapshotted from the ignored folder (git mode), not left out.
run_dir=$(ls -d "$demo"/runs/local-tinyimagenet-*/ 2>/dev/null || true)
run_dir=${run_dir%/}
[ -f "$run_dir/snapshot.json" ] || fail "no snapshot record under $demo/runs: $(ls -R "$demo/runs" 2>&1)"
grep -q '"mode": "git"' "$run_dir/snapshot.json" || fail "the run was not snapshotted with git: $(cat "$run_dir/snapshot.json")"
rank0=$(ls "$demo"/logs/local-tinyimagenet_*.restart0.0.out 2>/dev/null || true)
[ -n "$rank0" ] || fail "no rank 0 log in $demo/logs: $(ls "$demo/logs" 2>&1)"
id=${rank0##*_}
id=${id%%.*}
logs=$demo/logs
rank1=$logs/local-tinyimagenet_${id}.restart0.1.out
[ -f "$rank1" ] || fail "no node 1 log in $logs: $(ls "$logs")"
grep -q "ddp-train: 4 rank(s), smallcnn on CPU/Gloo, tinyimagenet data" "$rank0" || fail "rank 0 log: $(cat "$rank0")"
grep -q "^Epoch \[4/4\] LR: " "$rank0" || fail "no last epoch line: $(cat "$rank0")"
grep -q "ddp-train: parameters identical on all 4 ranks" "$rank0" || fail "no replica check: $(cat "$rank0")"
grep -q "ddp-train: node 1 of 2: started 2 worker(s), ranks 2-3 of 4" "$rank1" || fail "node 1 log: $(cat "$rank1")"
if grep -q '^\[rank 1\] Epoch' "$rank0"; then fail "rank 1 printed an epoch line"; fi
metrics=$logs/local-tinyimagenet_${id}.metrics.jsonl  # $DDPCTL_METRICS_FILE, set by the script
python3 - "$metrics" <<'PY' || fail "metrics: $(cat "$metrics")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["epoch"] for r in recs] == [1, 2, 3, 4]
assert all(r["world_size"] == 4 and r["local_world_size"] == 2 for r in recs)
assert recs[-1]["train_loss"] < recs[0]["train_loss"]
PY
grep -q '"phase": "done", "epoch": 4, "epochs": 4' "$logs/local-tinyimagenet_${id}.progress.json" ||
  fail "progress file: $(cat "$logs/local-tinyimagenet_${id}.progress.json")"
# The hybrid example's scripts, the demo's last step.
ls "$demo"/hybrid/*.sbatch >/dev/null 2>&1 || fail "no hybrid scripts: $(ls "$demo/hybrid" 2>&1)"
