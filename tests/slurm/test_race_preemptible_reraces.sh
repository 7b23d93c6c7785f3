#!/usr/bin/env bash
# Racing preemptible capacity (docs/race.md): a shape on `scavenger` (free
# now, preemptible: urgent's jobs take its nodes after 30 s of grace) races
# a shape on `a100-80gb` (not preemptible, its nodes held by another job).
# The scavenger shape wins and trains; an urgent job preempts it; it
# checkpoints, requeues itself and races the group again (generation 2).
# Once the a100-80gb nodes are free, that shape wins generation 2, resumes
# from the run's checkpoint and completes; the preempted job never trains
# again, and never two at once.
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
nodes_run_ddpctl=no
if timeout 120 "$LOCAL_SLURM" exec -- srun -p cpu -N 1 -n 1 -t 1 "$DDPCTL" --version >/dev/null 2>&1; then nodes_run_ddpctl=yes; fi
# A training that resumes from the run's checkpoint and records each training.
cp "$DDPCTL_SOURCE/tests/slurm/data/resumes_from_checkpoint.sh" "$T/"
write_spec job.yaml <<YAML
partition: scavenger
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 2}
command: [$T/resumes_from_checkpoint.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
blocker=$(on_login sbatch --parsable -p a100-80gb -N 2 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-blocker" --wrap 'sleep 600')
at_exit "on_login scancel $blocker"
deadline=$((SECONDS + 60)) since=$SECONDS
until [ "$(on_login squeue -h -j "$blocker" -o %T)" = RUNNING ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the blocker job $blocker did not start: $(on_login squeue -h -j "$blocker" -o '%T %r' 2>&1)"
  pause_since "$since"
done
run submit job.yaml
expect_code 0
expect_err "runs on preemptible capacity (partition scavenger"
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")
deadline=$((SECONDS + 90)) since=$SECONDS
until p=$(cat progress 2>/dev/null); [ "${p:-0}" -ge 20 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the scavenger shape did not train 20 steps: $(cat trainings 2>&1)$(jobs_report)"
  pause_since "$since"
done
w1=$(cut -d' ' -f1 "$run_dir/race/claim/winner")
[ "$(grep -lx "$w1" "$run_dir"/race/jobs/* | xargs -n1 basename)" = 1x1 ] || fail "generation 1 was not won by the scavenger shape: job $w1"
urgent=$(on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 300')
at_exit "on_login scancel $urgent"
w1_log="logs/${JOB_NAME}-1x1_$w1"
deadline=$((SECONDS + 90)) since=$SECONDS
until [ -d "$run_dir/race/gen.2" ]; do
  # Where the nodes cannot run this build of ddpctl the job says so, and the
  # user re-races by hand (docs/race.md).
  if [ "$nodes_run_ddpctl" = no ] && grep -q "the re-race failed here\|is not on this node" "$w1_log.err" 2>/dev/null; then
    run race-again "$run_id"
  fi
  [ "$SECONDS" -lt "$deadline" ] || fail "no re-race after the preemption: $(cat "$w1_log".{out,err} 2>&1)$(jobs_report)"
  pause_since "$since"
done
grep -qF "ddpctl: requeueing job $w1 (restart 1 of 2): after preemption" "$w1_log.err" ||
  fail "the preempted winner did not requeue itself after preemption: $(cat "$w1_log.err")"
# The a100-80gb nodes free: that shape starts first and wins generation 2.
on_login scancel "$blocker"
deadline=$((SECONDS + 120)) since=$SECONDS
until [ -s "$run_dir/race/claim.2/winner" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 2 was not won: $(find "$run_dir/race" | sort | tr '\n' ' ')$(jobs_report)"
  pause_since "$since"
done
w2=$(cut -d' ' -f1 "$run_dir/race/claim.2/winner")
[ "$(grep -lx "$w2" "$run_dir"/race/gen.2/jobs/* | xargs -n1 basename)" = a100 ] ||
  fail "generation 2 was not won by the a100 shape: job $w2$(jobs_report)"
deadline=$((SECONDS + 120)) since=$SECONDS
until grep -q ":$w2 300$" finished 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $w2 did not finish: $(cat trainings finished 2>&1)$(jobs_report)"
  pause_since "$since"
done
echo "trainings: $(cat trainings)"
[ ! -f double ] || fail "two trainings at once: $(cat double)"
[ "$(wc -l <trainings)" -eq 2 ] || fail "expected two trainings (scavenger, then a100): $(cat trainings)"
resumed=$(sed -n "s/^[^ ]*:$w2 \([0-9]*\)$/\1/p" trainings)
[ "${resumed:-0}" -ge 20 ] || fail "job $w2 did not resume from the checkpoint (step ${resumed:-none})"
wait_for_sacct "$w1" CANCELLED 60
run status "$run_id"
echo "status: $(cat "$T/out")"
grep -qE "generation 2 \(re-raced: job $w1 \(shape 1x1\), the winner of generation 1, requeued itself \(after preemption" "$T/out" ||
  fail "status does not say generation 2 re-raced the preempted winner: $(cat "$T/out" "$T/err")"
echo "scavenger job $w1 preempted at its step; a100 job $w2 resumed from step $resumed"
