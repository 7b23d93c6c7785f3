#!/usr/bin/env bash
# Provenance: the run records the ddpctl that submitted it, and from the
# job's first node every attempt records what it ran with (the program's
# resolved path and script, its Python's and torch's versions, the
# variables ddpctl set); status --json carries it per job and status RUN
# prints it; report warns when the rows it compares ran in different
# environments, and `ddpctl diff` names the variable that changed.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
# The program says what it sees, which the record must match: its Python's
# version, and torch's where the node has it.
cat >train.py <<'PY'
import os, sys
print("python", sys.version.split()[0])
# One metrics line: report has a row to show however short the job was.
with open(os.environ["DDPCTL_METRICS_FILE"], "a") as f:
    f.write('{"epoch": 1, "epochs": 1, "img_per_s": 100}\n')
try:
    import torch
    print("torch", torch.__version__)
except ImportError:
    print("torch none")
PY
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
env: {DATASET_VARIANT: small}
command: [python3, train.py]
YAML
git add -A && git commit -qm one

run submit job.yaml
expect_code 0
id1=$(submitted_job_id)
wait_for_job "$id1" COMPLETED 60
seen() { sed -n "s/^$1 //p" "logs/${JOB_NAME}_$id1.restart0.0.out"; }
python_version=$(seen python)
torch_version=$(seen torch)
[ -n "$python_version" ] || fail "the program did not run: $(cat "logs/${JOB_NAME}_$id1".*)"
record="logs/${JOB_NAME}_$id1.restart0.environment.json"
[ -s "$record" ] || fail "no environment record $record; the agent said: $(cat "logs/${JOB_NAME}_$id1.agent.err" 2>/dev/null)"
run status "$id1" --json
expect_code 0
# Where its PATH finds python3 (pyenv's shim runs another python3, which
# is what the program sees as its own).
recorded=$(sed -n 's/^ *"program_path": "\(.*\)",$/\1/p' "$T/out")
case "$recorded" in
  */python3) on_login test -x "$recorded" || fail "the recorded program $recorded is not executable" ;;
  *) fail "the recorded program is not a python3: '$recorded'" ;;
esac
expect_out_re "\"script\": \"$T/runs/\.snapshots/[0-9a-f]+/train\.py\""
expect_out "\"python\": \"$python_version\""
expect_out '"DATASET_VARIANT": "small"'
expect_out_re '"ddpctl": "[0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]'
expect_out_re '"MASTER_PORT": "[0-9]+"'
if [ "$torch_version" != none ]; then
  expect_out "\"torch\": \"$torch_version\""
else
  expect_out '"torch": null'
fi
run status "$id1"
expect_out_re "^job $id1 ran: $recorded $T/runs/\.snapshots/[0-9a-f]+/train\.py on [a-z0-9]+ \(attempt 1\); python $python_version"
expect_out "set DATASET_VARIANT=small"
expect_out_re "submitted by ddpctl [0-9]+\.[0-9]+"

# The same program with another DATASET_VARIANT: report and diff say so.
sed -i 's/DATASET_VARIANT: small/DATASET_VARIANT: full/' job.yaml
git commit -qam two
run submit job.yaml
expect_code 0
id2=$(submitted_job_id)
wait_for_job "$id2" COMPLETED 60
run report "$id1" "$id2"
expect_code 0
expect_out "warning: these rows ran in different environments: DATASET_VARIANT small (1x1) vs full (1x1)"
run diff "$id1" "$id2"
expect_code 0
expect_out "== environment (job $id1 attempt 1 vs job $id2 attempt 1)"
expect_out "DATASET_VARIANT: small -> full"
