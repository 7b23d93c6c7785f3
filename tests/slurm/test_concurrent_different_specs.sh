#!/usr/bin/env bash
# 8 different specs submitted at once never wait on each other's lock or
# lose each other's records: 8 jobs, 8 runs, every record valid JSON.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  write_spec "job$i.yaml" <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 30$i"
YAML
  "$LOCAL_SLURM" exec -- "$DDPCTL" submit "job$i.yaml" >"out.$i" 2>"err.$i" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "submit $((i + 1)) failed: $(cat "out.$((i + 1))" "err.$((i + 1))")"
done
[ "$(cat out.* | grep -c "^submitted job" || true)" -eq 8 ] || fail "not 8 jobs submitted: $(cat out.* err.*)"
[ "$(job_ids | wc -l)" -eq 8 ] || fail "Slurm has jobs $(job_ids | tr '\n' ' '), expected 8"
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 8 ] || fail "${#dirs[@]} run directories, expected 8"
for d in "${dirs[@]}"; do
  for f in run.json ledger.json; do
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$d$f" || fail "$d$f is not valid JSON"
  done
done
