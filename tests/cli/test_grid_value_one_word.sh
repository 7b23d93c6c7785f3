#!/usr/bin/env bash
# A grid value reaches the program as exactly one word, whatever it holds,
# also where its placeholder stands in a shell line (a string command:), and
# DDPCTL_CELL holds the cell's name as it is: each cell script `gen` writes
# is run (its DDPCTL_ exports, then its launch command) and the words the
# program gets are compared with the values (docs/sweeps.md).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cat >g.yaml <<'YAML'
name: g
cluster: CLUSTER
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'printf ''%s\0'' {V} v={V} "d={V}" ''s={V}'' "$DDPCTL_CELL"'
grid:
  env.V: ["$(touch M)", "a b", "it's", "*", "\\", "", "$DDPCTL_CELL", "\"; touch M; \""]
YAML
sed -i "s#CLUSTER#$DDPCTL_SOURCE/configs/clusters/local.yaml#" g.yaml
run gen g.yaml -o scripts
expect_code 0
mkdir run
python3 - <<'PY' || fail "a value did not reach the program as one exact word"
import os, subprocess
values = ["$(touch M)", "a b", "it's", "*", "\\", "", "$DDPCTL_CELL", '"; touch M; "']
bad = False
for i, v in enumerate(values):
    text = open(f"scripts/cells/{i}.sh").read()
    exports = [l for l in text.splitlines() if l.startswith("export DDPCTL_")]
    mark = "ddpctl-task \\\n"
    at = text.index(mark) + len(mark)
    launch = text[at:text.index("\n", at)].strip()
    assert launch.endswith(" &"), launch
    out = subprocess.run(["bash", "-c", "\n".join(exports + [launch[:-2]])], cwd="run",
                         capture_output=True).stdout.decode()
    words = out.split("\0")[:-1]
    expect = [v, "v=" + v, "d=" + v, "s=" + v, "V=" + v]
    if words != expect:
        print(f"cell {i} ({v!r}): the program got {words!r}, not {expect!r}")
        bad = True
if os.path.exists("run/M"):
    print("a value was run: run/M was made")
    bad = True
raise SystemExit(1 if bad else 0)
PY
echo ok
