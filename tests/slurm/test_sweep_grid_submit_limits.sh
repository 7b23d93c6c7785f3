#!/usr/bin/env bash
# A grid over the user's submit limits (docs/sweeps.md "Submit limits"),
# against limits made for real: a QOS tq-submit with MaxSubmitJobsPerUser=4,
# and an account tacct-submit whose association for the user has
# MaxSubmitJobs=3. Slurm counts every task of an array against them and
# refuses the whole array's sbatch, so ddpctl refuses first, before any
# sbatch (a recording sbatch first on PATH sees none), naming the limit:
# - the association's 3 refuse a 4-cell grid in QOS normal; Slurm itself
#   refuses it the same way (--no-preflight); in QOS tq-submit, whose own
#   per-user limit replaces the association's, Slurm takes the 4 cells and
#   so does ddpctl;
# - the QOS's 4 refuse a 6-cell grid; with 2 of the user's jobs queued, a
#   3-cell grid is refused ("2 more fit") and a 2-cell grid submitted;
# - sweep retry counts its cells the same way.
# The jobs are held (hold: true), so nothing runs. The QOS, the account and
# the association are removed at the end (and before, should a killed run
# have left them): the cluster's own settings are never changed.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
qos=tq-submit account=tacct-submit

remove_limits() {
  # Slurm keeps a QOS or account that jobs still use: the jobs go first.
  on_login scancel --name="$JOB_NAME" >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 60))
  while [ -n "$(own_live_jobs)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  on_login sacctmgr -i delete user root account="$account" >/dev/null 2>&1 || true
  on_login sacctmgr -i delete account "$account" >/dev/null 2>&1 || true
  on_login sacctmgr -i delete qos "$qos" >/dev/null 2>&1 || true
}
remove_limits
at_exit remove_limits

on_login sacctmgr -i add qos "$qos" MaxSubmitJobsPerUser=4 >/dev/null
on_login sacctmgr -i add account "$account" Description=ddpctl-tests Organization=ddpctl >/dev/null
on_login sacctmgr -i add user root Account="$account" QOS=normal,"$qos" DefaultQOS=normal MaxSubmitJobs=3 >/dev/null
[ "$(on_login sacctmgr -n -P show assoc where user=root account="$account" format=MaxSubmit)" = 3 ] ||
  fail "the association has no MaxSubmitJobs=3: $(on_login sacctmgr -n -P show assoc where account="$account" 2>&1)"

# Every sbatch ddpctl runs, recorded, then the real one.
export CALLS="$T/sbatch-calls"
: >"$CALLS"
# shellcheck disable=SC2016  # expanded when the fake runs
fake_command sbatch 'echo "sbatch $*" >>"$CALLS"; exec "$REAL" "$@"'
sbatches() { grep -c -- '--parsable' "$CALLS" || true; }

# grid FILE CELLS [QOS]: a held grid of CELLS cells (env.SEED from FILE's
# name, so that every file is a sweep of its own) in account tacct-submit.
grid() {
  local values seed
  values=$(seq -s, 1 "$2")
  seed=$(cksum <<<"$1" | cut -d' ' -f1)
  write_spec "$1" <<YAML
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
account: $account
${3:+qos: $3}
hold: true
command: "echo $seed"
grid:
  env.SEED: [$values]
YAML
}
# swept: the sweep id the last `run sweep` printed.
swept() {
  local id
  id=$(sed -n 's/^sweep \([^:]*\): .*/\1/p' "$T/out")
  [ -n "$id" ] || fail "sweep printed no sweep id: $(cat "$T/out" "$T/err")"
  echo "$id"
}
# queued N: waits until Slurm counts N of the user's jobs in QOS tq-submit
# (a cancel frees its count when the controller has ended the jobs).
queued() {
  local deadline=$((SECONDS + 60)) mgr
  while :; do
    mgr=$(on_login scontrol show assoc_mgr users=root qos="$qos" flags=qos 2>&1 || true)
    grep -qF "MaxSubmitJobsPU=4($1)" <<<"$mgr" && return 0
    # No job of anyone's in the QOS: no user is listed.
    [ "$1" = 0 ] && grep -q "No Users" <<<"$mgr" && return 0
    [ "$SECONDS" -lt "$deadline" ] || fail "Slurm does not count $1 jobs of the user in QOS $qos: $mgr"
    sleep 0.3
  done
}

# 1. The association's MaxSubmitJobs=3, in QOS normal: 4 cells are refused.
grid assoc4.yaml 4
run sweep assoc4.yaml
expect_code 1
expect_err "grid: the grid's 4 cells are 4 jobs to Slurm; your association with account $account allows you 3 submitted jobs (MaxSubmitJobs) and you have 0 queued or running: 3 more fit; lower the grid, or submit it in parts (max_parallel does not change this: every task counts); nothing was submitted"
[ "$(sbatches)" = 0 ] || fail "sbatch was run: $(cat "$CALLS")"
expect_nothing_submitted
runs=$(find "$DDPCTL_RUNS" -mindepth 1 -maxdepth 1 -not -name '.*' 2>/dev/null || true)
[ -z "$runs" ] || fail "a run was recorded: $runs"
run sweep assoc4.yaml --dry-run
expect_code 1
expect_err "allows you 3 submitted jobs (MaxSubmitJobs)"
# What ddpctl foresaw is what Slurm does: the whole array refused.
run sweep --no-preflight assoc4.yaml
expect_code 1
expect_err "sbatch rejected the array"
[ "$(sbatches)" = 1 ] || fail "expected the one sbatch of --no-preflight: $(cat "$CALLS")"
expect_nothing_submitted
# In QOS tq-submit, its MaxSubmitJobsPerUser=4 replaces the association's 3:
# Slurm takes 4 cells, and ddpctl submits them.
grid qos4.yaml 4 "$qos"
run sweep qos4.yaml
expect_code 0
expect_out "4 cell(s), --array=0-3"
[ "$(sbatches)" = 2 ] || fail "expected one more sbatch: $(cat "$CALLS")"
qos4=$(swept)
queued 4
run cancel "$qos4"
expect_code 0
queued 0

# 2. The QOS's MaxSubmitJobsPerUser=4: 6 cells never fit.
grid qos6.yaml 6 "$qos"
run sweep qos6.yaml
expect_code 1
expect_err "the grid's 6 cells are 6 jobs to Slurm; QOS $qos allows you 4 submitted jobs (MaxSubmitJobsPerUser) and you have 0 queued or running: 4 more fit; lower the grid"
[ "$(sbatches)" = 2 ] || fail "sbatch was run: $(cat "$CALLS")"
# Two queued: 3 more cells do not fit now, 2 do.
grid a.yaml 2 "$qos"
run sweep a.yaml
expect_code 0
sweep_a=$(swept)
queued 2
grid b.yaml 3 "$qos"
run sweep b.yaml
expect_code 1
expect_err "the grid's 3 cells are 3 jobs to Slurm; QOS $qos allows you 4 submitted jobs (MaxSubmitJobsPerUser) and you have 2 queued or running: 2 more fit; wait until some of yours end, or lower the grid, or submit it in parts"
[ "$(sbatches)" = 3 ] || fail "sbatch was run for the refused grid: $(cat "$CALLS")"
grid c.yaml 2 "$qos"
run sweep c.yaml
expect_code 0
expect_out "submitted job array"
[ "$(sbatches)" = 4 ] || fail "expected one sbatch for the grid that fits: $(cat "$CALLS")"
queued 4

# 3. A retry counts its cells too: a's two cells, cancelled, with 3 queued.
run cancel "$sweep_a"
expect_code 0
queued 2
grid d.yaml 1 "$qos"
run sweep d.yaml
expect_code 0
queued 3
run sweep retry "$sweep_a"
expect_code 1
expect_err "the retry's 2 cells are 2 jobs to Slurm; QOS $qos allows you 4 submitted jobs (MaxSubmitJobsPerUser) and you have 3 queued or running: 1 more fit; wait until some of yours end, or retry fewer cells at once (--cells)"
[ "$(sbatches)" = 5 ] || fail "the refused retry ran sbatch: $(cat "$CALLS")"
run sweep retry "$sweep_a" --cells SEED=1
expect_code 0
expect_out "retrying them as job array"
[ "$(sbatches)" = 6 ] || fail "expected one sbatch for the retry that fits: $(cat "$CALLS")"
queued 4
