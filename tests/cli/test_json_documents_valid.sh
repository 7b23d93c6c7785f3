#!/usr/bin/env bash
# --json on every command that prints (docs/json.md), without a cluster
# (tests/cli/fake_slurm's queue): each command's document in its success
# and failure scenarios is validated against its published schema by
# Debian's python3-jsonschema (tests/json/validate.py), which fails on a
# document of a kind that has no schema; every kind `--version --json`
# names has one; an error's document names file, line and field where the
# human message does, and the exit status is the same as without --json.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
PY=/usr/bin/python3
validate() {  # validate FILE...: every document in each FILE valid
  "$PY" "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" "$@" >"$T/valid" 2>&1 ||
    fail "not valid against its schema: $(cat "$T/valid")"$'\n'"the document(s): $(cat "$@")"
}
# doc NAME CODE ARGS...: `ddpctl ARGS` ends with CODE; its stdout kept as NAME.json and validated.
doc() {
  local name=$1 want=$2
  shift 2
  run "$@"
  [ "$code" -eq "$want" ] || fail "ddpctl $*: exit $code, expected $want; stdout: $(cat "$T/out"); stderr: $(cat "$T/err")"
  cp "$T/out" "$T/$name.json"
  validate "$T/$name.json"
}
field() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$T/$1.json" "$2"; }
cat >job.yaml <<YAML
name: jdoc
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
YAML

doc version 0 --version --json
# Every kind it prints has a published schema.
"$PY" - "$T/version.json" "$DDPCTL_SOURCE/schemas" <<'PY' || fail "a kind without a schema"
import json, os, sys
d = json.load(open(sys.argv[1]))
for kind, majors in d["documents"].items():
    for m in majors:
        if m >= 1 and not os.path.exists(os.path.join(sys.argv[2], f"ddpctl.{kind}.{m}.json")):
            sys.exit(f"{kind}/{m} has no schema")
PY
doc schemas 0 schema --json
[ "$(field schemas 'len(d["kinds"])')" -ge 17 ] || fail "schema --json lists $(field schemas 'len(d["kinds"])') kinds"
doc schema_status 0 schema status --json
# shellcheck disable=SC2016 # "$id" is the schema's key, read by python, not a shell variable
[ "$(field schema_status 'd["schema_document"]["$id"]')" = "https://ddpctl.invalid/schemas/ddpctl.status.1.json" ] ||
  fail "schema status: $(cat "$T/schema_status.json")"
doc schema_nope 1 schema nope --json
expect_err "'nope': no such document kind"

doc init 0 init --cluster local --gpus 0 -o started.yaml --json
[ "$(field init 'd["file"]')" = started.yaml ] || fail "init's file: $(cat "$T/init.json")"
doc gen 0 gen job.yaml -o gen --json
[ "$(field gen 'd["scripts"][0]["shape"]')" = 1x1 ] || fail "gen's scripts: $(cat "$T/gen.json")"
doc gen_stdout 0 gen job.yaml --stdout --json
# A spec error: file, line, column and field in the error's document, the
# same exit status as without --json, the human words on stderr.
printf 'name: bad\ncluster: local\nnodes: zero\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: hostname\n' >bad.yaml
run gen bad.yaml --stdout
human_code=$code
doc gen_bad 1 gen bad.yaml --stdout --json
[ "$human_code" -eq 1 ] || fail "without --json: exit $human_code"
[ "$(field gen_bad 'd["errors"][0]["file"]')" = bad.yaml ] || fail "no file: $(cat "$T/gen_bad.json")"
[ "$(field gen_bad 'd["errors"][0]["line"]')" = 3 ] || fail "no line: $(cat "$T/gen_bad.json")"
[ "$(field gen_bad 'd["errors"][0]["field"]')" = nodes ] || fail "no field: $(cat "$T/gen_bad.json")"
expect_err "bad.yaml:3"
doc usage 2 submit --json
[ "$(field usage 'd["schema"]')" = ddpctl.error/1 ] || fail "a usage error's document: $(cat "$T/usage.json")"

doc dry 0 submit job.yaml --no-preflight --dry-run --json
[ "$(field dry 'd["dry_run"]')" = True ] || fail "dry run: $(cat "$T/dry.json")"
doc submit 0 submit job.yaml --no-preflight --json
run_id=$(field submit 'd["run"]')
[ "$(field submit 'd["jobs"][0]["job"]')" = 101 ] || fail "submit's job: $(cat "$T/submit.json")"
[ -d "$(field submit 'd["dir"]')" ] || fail "submit's dir: $(cat "$T/submit.json")"
doc again 0 submit job.yaml --no-preflight --json
[ "$(field again 'd["already"]')" = True ] || fail "already submitted: $(cat "$T/again.json")"
[ "$(field again 'd["run"]')" = "$run_id" ] || fail "already: another run: $(cat "$T/again.json")"
echo "sbatch: error: Batch job submission failed: Invalid account" >"$FAKE_SLURM/sbatch_fails"
doc rejected 1 submit job.yaml --no-preflight --again --json
[ "$(field rejected 'd["jobs"][0]["outcome"]')" = rejected ] || fail "the rejected job: $(cat "$T/rejected.json")"
rm "$FAKE_SLURM/sbatch_fails"
# --watch: a document a line per look, until every job shown has ended (at once here).
run status "$(field rejected 'd["run"]')" --watch --json
expect_code 0
cp "$T/out" "$T/watch.ndjson"
validate "$T/watch.ndjson"
[ "$(wc -l <"$T/watch.ndjson")" -ge 1 ] || fail "status --watch --json printed no document"
sed 's/^name: jdoc/name: jdoc2/' job.yaml >job2.yaml
doc submit2 0 submit job2.yaml --no-preflight --json
run2=$(field submit2 'd["run"]')

# A race of a spec's alternatives, and a grid's sweep.
cat >race.yaml <<YAML
name: jrace
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
alternatives:
  - {nodes: 2}
YAML
doc race 0 race race.yaml --no-preflight --json
[ "$(field race 'len(d["jobs"])')" = 2 ] || fail "race's jobs: $(cat "$T/race.json")"
[ "$(field race 'd["race"]')" = True ] || fail "race: $(cat "$T/race.json")"
cat >grid.yaml <<YAML
name: jgrid
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
grid:
  env.LR: ["0.1", "0.01"]
YAML
doc sweep 0 sweep grid.yaml --no-preflight --json
[ "$(field sweep 'd["jobs"][0]["array"]')" = 0-1 ] || fail "sweep's array: $(cat "$T/sweep.json")"

doc status 0 status --json
[ "$(field status 'len(d["rows"])')" -ge 3 ] || fail "status rows: $(cat "$T/status.json")"
doc status_run 0 status "$run_id" --json
[ "$(field status_run 'd["rows"][0]["job"]')" = 101 ] || fail "status RUN: $(cat "$T/status_run.json")"
# --json=0: the bare rows of before the envelope, still printed.
run status "$run_id" --json=0
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert isinstance(r, list) and r[0]["job_id"] == "101", r' "$T/out" ||
  fail "status --json=0: $(cat "$T/out")"
doc status_bad 2 status --json=7
doc report_no_metrics 1 report "$run_id" --json
mkdir -p logs
echo '{"epoch": 1, "epochs": 1, "world_size": 1, "train_loss": 0.5, "img_per_s": 100, "epoch_s": 10}' >logs/jdoc_101.metrics.jsonl
doc report 0 report "$run_id" --json
[ "$(field report 'd["rows"][0]["run"]')" = "$run_id" ] || fail "report's rows: $(cat "$T/report.json")"
doc report_nope 1 report no-such-run --json
doc diff 0 diff "$run_id" "$run2" --json
[ "$(field diff 'd["same"]')" = False ] || fail "diff: $(cat "$T/diff.json")"
doc plan 1 plan job.yaml --json
doc doctor 1 doctor --json
doc fetch 1 fetch "$run_id" --json
doc logs 1 logs no-such-run --json
doc cancel 0 cancel "$run_id" --json
[ "$(field cancel 'd["cancelled"][0]["job"]')" = 101 ] || fail "cancel: $(cat "$T/cancel.json")"

# The run's events: each a document of its own (NDJSON), a cursor on each.
run events "$run_id"
expect_code 0
cp "$T/out" "$T/events.ndjson"
validate "$T/events.ndjson"
types=$("$PY" -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$T/events.ndjson")
[ "$types" = "submitting submitted cancel_asked" ] || fail "the run's events: $types"
run events "$run_id" --follow --for 1 --heartbeat 1
cp "$T/out" "$T/follow.ndjson"
validate "$T/follow.ndjson"
grep -q '"type":"state"' "$T/follow.ndjson" || fail "no state first: $(cat "$T/follow.ndjson")"
run events "$run_id" --since yesterday
expect_code 1
expect_err "--since: 'yesterday': not a cursor of ddpctl events"
run events --all --types exploded
expect_code 1
expect_err "'exploded': no such event type"

# --json-into: the human view on the terminal, the run's events in the file.
sed 's/^name: jdoc/name: jinto/' job.yaml >into.yaml
run submit into.yaml --no-preflight --json-into "$T/into.ndjson"
expect_code 0
expect_out "submitted job"
validate "$T/into.ndjson"
types=$("$PY" -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$T/into.ndjson")
[ "$types" = "submitting submitted" ] || fail "--json-into's events: $types"
run submit into.yaml --json-into "$T/no/such/folder/x.ndjson"
expect_code 1
expect_err "--json-into: $T/no/such/folder/x.ndjson: cannot be written"
