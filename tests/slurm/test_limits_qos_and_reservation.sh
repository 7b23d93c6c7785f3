#!/usr/bin/env bash
# The site's limits before the queue (docs/slurm.md "Limits and
# reservations"), against limits made for real: a QOS with
# MaxTRESPerJob=gres/gpu=2, the default QOS of an account of its own, and a
# maintenance reservation on every node that starts in an hour.
# - 4 GPUs are refused, naming the QOS limit (Slurm itself would queue the
#   job as QOSMaxGRESPerJob: that is checked too, with --no-preflight);
# - 2 GPUs for 2 h are told when they could start and which --time starts
#   now; submitted as they are, status says why they wait (Slurm's own
#   reason); --fit-time submits with that time and the job runs now;
# - a race drops the 4-GPU shape and submits the other;
# - doctor lists the QOS limit and the reservation.
# All of it is removed at the end (and before, should a killed run have left it).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
qos=tq-gpu2 account=tacct-limits resv=t-maint

remove_limits() {
  # Slurm keeps a QOS or account that jobs still use: the jobs go first.
  on_login scancel --name="$JOB_NAME" >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 60))
  while [ -n "$(own_live_jobs)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  on_login scontrol delete ReservationName="$resv" >/dev/null 2>&1 || true
  on_login sacctmgr -i delete user root account="$account" >/dev/null 2>&1 || true
  on_login sacctmgr -i delete account "$account" >/dev/null 2>&1 || true
  on_login sacctmgr -i delete qos "$qos" >/dev/null 2>&1 || true
}
remove_limits
at_exit remove_limits

on_login sacctmgr -i add qos "$qos" MaxTRESPerJob=gres/gpu=2 >/dev/null
on_login sacctmgr -i add account "$account" Description=ddpctl-tests Organization=ddpctl >/dev/null
on_login sacctmgr -i add user root Account="$account" QOS="$qos" DefaultQOS="$qos" >/dev/null
[ "$(on_login sacctmgr -n -P show assoc where user=root account="$account" format=DefaultQOS)" = "$qos" ] ||
  fail "the association's default QOS is not $qos: $(on_login sacctmgr -n -P show assoc where account="$account" 2>&1)"
on_login scontrol create reservation ReservationName="$resv" StartTime=now+1hour Duration=120 Nodes=ALL Users=root \
  Flags=MAINT,IGNORE_JOBS >/dev/null
resv_start=$(on_login env SLURM_TIME_FORMAT=%s scontrol -o show reservation "$resv" |
  sed -n 's/.* StartTime=\([0-9]*\) .*/\1/p')
[ -n "$resv_start" ] || fail "the reservation was not made: $(on_login scontrol show reservation 2>&1)"

# The --time that starts now, as seen at Unix time $1: whole minutes before
# the reservation, one less when under half a minute would be left.
fit_minutes() {
  local d=$((resv_start - $1)) fit
  fit=$((d / 60 * 60))
  [ $((d - fit)) -ge 30 ] || fit=$((fit - 60))
  echo $((fit / 60))
}

# 1. Over the QOS's per-job limit: refused at the spec's line, nothing queued.
write_spec big.yaml <<YAML
partition: a100-80gb
gpu_type: a100
gpus_per_node: 4
account: $account
command: "true"
YAML
run submit big.yaml
expect_code 1
expect_err "big.yaml:6:16: gpus_per_node: 4 GPUs per job asked; QOS $qos allows 2 GPUs per job (MaxTRESPerJob); Slurm would queue it and it would never start"
expect_nothing_submitted
# What Slurm does with it: queues it, pending for good under the reason
# preflight named; status says so in words.
run submit --no-preflight big.yaml
expect_code 0
big_id=$(submitted_job_id)
deadline=$((SECONDS + 60))
until [ "$(on_login squeue -h -j "$big_id" -o %r)" = QOSMaxGRESPerJob ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $big_id is not pending as QOSMaxGRESPerJob: $(on_login squeue -h -j "$big_id" -o '%T %r')"
  sleep 0.3
done
run status
expect_out "it asks for more GPUs (GRES) per job than your QOS allows; it will never start"
on_login scancel "$big_id"

# 2. Within the QOS, but 2 h run into the reservation.
write_spec two.yaml <<YAML
partition: a100-80gb
gpu_type: a100
gpus_per_node: 2
account: $account
command: "true"
YAML
sed -i 's/^time: .*/time: "2:00:00"/' two.yaml
before=$(date +%s)
run submit --dry-run two.yaml
after=$(date +%s)
expect_code 0
expect_err "reservation $resv (maintenance)"
expect_err "before its 2h time limit would end: it cannot start before"
grep -qE -- "--time ($(fit_minutes "$before")|$(fit_minutes "$after"))m or less starts now" "$T/err" ||
  fail "no --time of $(fit_minutes "$before")m (or $(fit_minutes "$after")m) offered: $(cat "$T/err")"
# Submitted as it is, it waits; status gives Slurm's reason in words.
run submit two.yaml
expect_code 0
two_id=$(submitted_job_id)
deadline=$((SECONDS + 60))
until [[ "$(on_login squeue -h -j "$two_id" -o %r)" == *"Reserved for maintenance"* ]]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $two_id is not held by the reservation: $(on_login squeue -h -j "$two_id" -o '%T %r')"
  sleep 0.3
done
run status
expect_out "its nodes are reserved for maintenance during its time limit"
on_login scancel "$two_id"
# --fit-time: submitted with the time that fits, and it runs now.
before=$(date +%s)
run submit --again --fit-time two.yaml
after=$(date +%s)
expect_code 0
expect_err "--fit-time: time limit 00:"
fit_id=$(submitted_job_id)
limit=$(on_login squeue -h -t all -j "$fit_id" -o %l)
[ "$limit" = "$(fit_minutes "$before"):00" ] || [ "$limit" = "$(fit_minutes "$after"):00" ] ||
  fail "job $fit_id has time limit $limit, not $(fit_minutes "$before"):00"
wait_for_sacct "$fit_id" COMPLETED 120

# 3. A race of both: the 4-GPU shape is dropped with its reason.
write_spec race.yaml <<YAML
partition: a100-80gb
gpu_type: a100
gpus_per_node: 2
account: $account
command: "true"
alternatives:
  - {label: four, gpus_per_node: 4}
YAML
run race --plan race.yaml
expect_code 0
expect_out_re "^ *- +four +never \(dropped\).*4 GPUs per job asked; QOS $qos allows 2 GPUs per job"
run submit race.yaml
expect_code 0
expect_err "dropped from the race, it would never start: shape four"
expect_out_re "^submitted race of job [0-9]+ \(shape 1x2\) as run "

# 4. doctor lists both, and drafts them into the profile as comments.
run doctor
expect_code 0
expect_err "MaxTRESPerJob gres/gpu=2"
grep -qE "^reservation $resv +ok +$resv \(maintenance\)" "$T/err" || fail "doctor lists no reservation $resv: $(cat "$T/err")"
expect_out "#   QOS $qos: MaxTRESPerJob gres/gpu=2"
expect_out "#   reservation $resv (maintenance)"
