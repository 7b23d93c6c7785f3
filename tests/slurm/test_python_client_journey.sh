#!/usr/bin/env bash
# The Python package (python/ddpctl, docs/python.md) and `ddpctl tune`
# (docs/tune.md) on a real cluster, as a researcher uses them:
# 1. on the login node (its own python3): a notebook submits a run and
#    waits until it started; the notebook's process is killed (SIGKILL)
#    mid-run; a new one gets the run back by its id, waits for its end and
#    reads its result: the metric the job wrote, in the report's document;
# 2. from the user's machine with on= the login host: submit, wait, the
#    run's events (started, ended COMPLETED);
# 3. `ddpctl tune` from the user's machine with --on: 3 trials, 2 in
#    flight, each trial's job writes val_loss = its env.LR; the study ends
#    with every trial COMPLETE and the best value the lowest LR tried (no
#    pruner: whether a trial is pruned depends on the LRs drawn; pruning is
#    python/tests/test_tune.py's).
# One version: user journeys, not what differs between Slurm versions.
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
cluster_has_this_ddpctl
PY=/usr/bin/python3
# The job: its metric line (val_loss = $LR), then on until $FINISH exists.
write_spec job.yaml <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
env: {LR: "0.5", FINISH: "$T/finish"}
command: [bash, -c, 'echo "{\"epoch\": 0, \"val_loss\": \$LR}" >>"\$DDPCTL_METRICS_FILE"; until [ -e "\$FINISH" ]; do sleep 0.2; done']
YAML

# 1. The notebook on the login node, killed mid-run, and the run got back.
cat >notebook.py <<'PY'
import sys
import ddpctl
client = ddpctl.Client(binary=sys.argv[1])
run = client.submit("job.yaml", set={"env.LR": "0.25"})
run.wait("started", timeout=120)
print(run.id, flush=True)
import time
time.sleep(600)  # killed here
PY
"$LOCAL_SLURM" exec -- env PYTHONPATH="$DDPCTL_SOURCE/python" python3 notebook.py "$DDPCTL" >"$T/nb.out" 2>"$T/nb.err" &
nb=$!
since=$SECONDS
until [ -s "$T/nb.out" ]; do
  kill -0 "$nb" 2>/dev/null || fail "the notebook ended before its run started: $(cat "$T/nb.err")"
  [ $((SECONDS - since)) -lt 150 ] || fail "the notebook's run did not start in 150 s: $(cat "$T/nb.err")$(jobs_report)"
  sleep 0.2
done
run_id=$(cat "$T/nb.out")
kill -KILL "$nb"
wait "$nb" 2>/dev/null || true
[ "$(on_login squeue -h -n "$JOB_NAME" -t R -o %i | wc -l)" -eq 1 ] || fail "the run's job is not running after the notebook died$(jobs_report)"
touch "$T/finish"
cat >again.py <<'PY'
import json, sys
import ddpctl
run = ddpctl.Client(binary=sys.argv[1]).run(sys.argv[2])
rows = run.wait("ended", timeout=120)
result = run.result()
print(json.dumps({"state": rows[0]["state"], "report": result}))
PY
"$LOCAL_SLURM" exec -- env PYTHONPATH="$DDPCTL_SOURCE/python" python3 again.py "$DDPCTL" "$run_id" >"$T/again.out" 2>"$T/again.err" ||
  fail "the run could not be got back by its id: $(cat "$T/again.err")"
$PY - "$T/again.out" <<'PY' || fail "the run got back did not end with its metric: $(cat "$T/again.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "COMPLETED", d["state"]
assert d["report"]["schema"] == "ddpctl.report/1", d["report"]
assert "0.25" in json.dumps(d["report"]["rows"]), d["report"]["rows"]
PY

# 2. From the user's machine, on= the login host.
user_machine
cat >remote.py <<'PY'
import sys
import ddpctl
client = ddpctl.Client(on=sys.argv[1], remote_dir=sys.argv[2], binary=sys.argv[3])
run = client.submit("job.yaml")
rows = run.wait("ended", timeout=120)
assert rows[0]["state"] == "COMPLETED", rows
kinds = [(e["type"], e.get("state")) for e in run.events(types=["started", "ended"])]
assert kinds == [("started", None), ("ended", "COMPLETED")], kinds
print(run.id)
PY
env -u DDPCTL_RUNS PYTHONPATH="$DDPCTL_SOURCE/python" $PY remote.py "$host" "$T" "$DDPCTL" >"$T/remote.out" 2>"$T/remote.err" ||
  fail "the client over on= failed: $(cat "$T/remote.err")"
[ -d "$T/runs/$(cat "$T/remote.out")" ] || fail "the run over on= is not in $T/runs there: $(ls "$T/runs")"

# 3. ddpctl tune from the user's machine, the trials on the cluster.
printf 'env.LR: {uniform: [0.1, 0.9]}\n' >space.yaml
env -u DDPCTL_RUNS "$DDPCTL" tune job.yaml --space space.yaml --metric val_loss --trials 3 --parallel 2 \
  --storage "sqlite:///$T/study.db" --poll 1 --pruner none --on "$host" --remote-dir "$T" >"$T/tune.out" 2>"$T/tune.err" ||
  fail "tune failed: $(cat "$T/tune.out" "$T/tune.err")"
echo "tune: $(cat "$T/tune.out")"
$PY - "sqlite:///$T/study.db" <<'PY' || fail "the study is not what its trials did: $(cat "$T/tune.out")"
import optuna
study = optuna.load_study(study_name="job", storage=__import__("sys").argv[1])
states = [t.state.name for t in study.trials]
assert states == ["COMPLETE"] * 3, states
lrs = [t.params["env.LR"] for t in study.trials]
assert abs(study.best_value - min(lrs)) < 1e-9, (study.best_value, lrs)
assert all(t.user_attrs["ddpctl_run"].startswith(f"job-t{t.number}-") for t in study.trials)
# Node-hours from Slurm's times (a trial of a second may be 0).
assert all(t.user_attrs.get("ddpctl_node_hours", -1) >= 0 and t.user_attrs["ddpctl_code"] for t in study.trials), \
    [t.user_attrs for t in study.trials]
PY
# The study's trials by parameter, from the login host's runs folder.
env -u DDPCTL_RUNS "$DDPCTL" report job --on "$host" --remote-dir "$T" --json=1 >"$T/study.json" 2>"$T/study.err" ||
  fail "report of the study over --on: $(cat "$T/study.json" "$T/study.err")"
$PY - "$T/study.json" <<'PY' || fail "report STUDY is not the study's trials: $(cat "$T/study.json")"
import json, sys
d = json.load(open(sys.argv[1]))["study"]
assert [k["path"] for k in d["keys"]] == ["env.LR"], d["keys"]
assert sorted(c["index"] for c in d["cells"]) == [0, 1, 2], d["cells"]
for c in d["cells"]:
    assert c["state"] == "COMPLETED", c
    assert abs(c["metrics"]["val_loss"] - float(c["values"]["LR"])) < 1e-9, c
PY
