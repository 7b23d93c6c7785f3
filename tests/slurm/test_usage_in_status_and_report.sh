#!/usr/bin/env bash
# A CPU-bound program of the user's own (no metrics, no progress file): while
# it runs, status shows the job's CPU use and RSS from the job agent's
# samples, and the GPUs that nvidia-smi reports (a fake first on PATH, called
# by the sampler on every node); report then has the usage columns for it,
# and report --plot draws its usage over time.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir -p "$T/fakebin"
cat >"$T/fakebin/nvidia-smi" <<SH
#!/bin/sh
# Two GPUs, as nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits prints them.
echo "\$*" >>"$T/nvidia-smi.calls.\$(hostname)"
printf '0, 97, 62000, 81920\n1, 95, 61000, 81920\n'
SH
chmod +x "$T/fakebin/nvidia-smi"
cat >"$T/burn.py" <<'PY'
# Keeps one core busy until the test says stop.
import os, time
stop = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stop")
x = 0
while not os.path.exists(stop):
    for _ in range(100000):
        x += 1
PY
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: [python3, $T/burn.py]
monitor: {interval: 2s}
YAML
# The job inherits the login environment's PATH (sbatch's default --export=ALL).
export PATH="$T/fakebin:$PATH"
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
at_exit "touch '$T/stop'"
deadline=$((SECONDS + 90))
while :; do
  run status "$JOB_NAME" --json
  # Two samples per node at least: CPU use is measured between samples.
  if python3 - "$T/out" <<'PY'
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
nodes = row.get("usage", {}).get("nodes", {})
sys.exit(0 if len(nodes) == 2 and all(n.get("cpu_pct") is not None for n in nodes.values()) else 1)
PY
  then break; fi
  [ "$SECONDS" -lt "$deadline" ] || fail "status --json shows no usage of both nodes: $(cat "$T/out")"$'\n'"$(ls logs)"
  sleep 1
done
python3 - "$T/out" <<'PY' || fail "the usage in status --json is not the burner's: $(cat "$T/out")"
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
u = row["usage"]
assert u["total"]["gpus"] == 4, u["total"]
assert u["total"]["gpu_util_pct"] == 96.0, u["total"]
for node, s in u["nodes"].items():
    ranks = s["ranks"]
    assert len(ranks) == 1, (node, ranks)            # one task per node, the training step's
    assert ranks[0]["cpu_s"] > 0, (node, ranks)       # it burns CPU
    assert s["rss_bytes"] > 1 << 20, (node, s)        # python's RSS, more than 1 MiB
    assert s["cpus"] >= 1, s
PY
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "GPU 96% 240/320 GiB · CPU "
expect_out " RSS "
for node in $(on_login scontrol show hostnames "$(on_login squeue -h -j "$id" -o %N)"); do
  grep -q "query-gpu=index,utilization.gpu,memory.used,memory.total" "$T/nvidia-smi.calls.$node" ||
    fail "the sampler on $node did not call nvidia-smi: $(ls "$T")"
done
touch "$T/stop"
wait_for_sacct "$id" COMPLETED 60
run report "$JOB_NAME"
expect_code 0
echo "report: $(cat "$T/out")"
expect_out "GPU UTIL"
expect_out "96%"
expect_out "60.5/60.1/60.5"
run report "$JOB_NAME" --format json
grep -q '"gpu_util_pct": 96.0' "$T/out" || fail "report --format json has no GPU utilisation: $(cat "$T/out")"
grep -q '"rss_peak_bytes": [1-9]' "$T/out" || fail "report --format json has no peak RSS: $(cat "$T/out")"
run report "$JOB_NAME" --plot "$T/scaling.png"
expect_code 0
plot=$(ls "$T"/scaling.*-"$id".usage.png 2>/dev/null || true)
{ [ -n "$plot" ] && [ -s "$plot" ]; } || fail "report --plot drew no usage picture: $(cat "$T/err"); $(ls "$T")"
expect_err "plot written to $plot"
