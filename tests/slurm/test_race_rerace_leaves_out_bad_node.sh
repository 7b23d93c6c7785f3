#!/usr/bin/env bash
# A node the requeued winner's job leaves out is left out by the shapes raced
# again too. Generation 1: the 2-node shape (g1, g2 by name) wins, while
# blockers on g3 and g4 keep the 3-node shape from starting; its node check
# fails on g2 (TCP to g2 blocked), so it is requeued excluding g2. The job
# itself (where the nodes run this ddpctl), else `ddpctl race-again RUN` by
# hand, races the 3-node shape again with g2 left out: it is submitted
# with ExcNodeList=g2 (without it, Slurm would give it g1-g3, the node check
# would fail again, and that shape would be requeued in turn). Once the
# blockers end it starts on g1, g3, g4 while the requeued winner waits for its
# BeginTime, trains and completes; status says why g2 was left out.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
"$LOCAL_SLURM" node block-tcp g2 20000-29999 >/dev/null
at_exit "'$LOCAL_SLURM' node unblock g2"
for n in g3 g4; do
  on_login sbatch --parsable -J "$JOB_NAME-blocker" -p cpu -w "$n" --exclusive -t 5 --wrap "sleep 300" >>blockers
done
# shellcheck disable=SC2016  # expanded when the test ends
at_exit 'on_login scancel $(cat "$T/blockers")'
while read -r b; do wait_for_job "$b" RUNNING; done <blockers
# Two specs raced, the 2-node one first: it has the queue's priority and
# starts; the 3-node one waits for resources behind it.
write_spec pair.yaml <<YAML
partition: cpu
nodes: 2
nodelist: g[1-2]
gpus_per_node: 0
procs_per_node: 1
command: 'echo "training on \$(hostname)"'
requeue: {max_restarts: 1, grace: 30}
YAML
sed -e 's/^nodes: 2$/nodes: 3/' -e '/^nodelist:/d' pair.yaml >three.yaml
run race pair.yaml three.yaml
expect_code 0
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")
deadline=$((SECONDS + 90))
until [ -s "$run_dir/race/claim/winner" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 1 was not won within 90 s$(jobs_report)"
  sleep 0.2
done
read -r w1 label1 _ <"$run_dir/race/claim/winner"
[ "$label1" = 2x1 ] || fail "generation 1 was won by shape $label1 (job $w1), not by 2x1: the blockers did not hold the 3-node shape back$(jobs_report)"
w1_log=$(echo logs/*_"$w1".err)
w1_log=${w1_log%.err}
deadline=$((SECONDS + 120))
until grep -qF "ddpctl: requeueing job $w1 (restart 1 of 1): by the node check: node g2 cannot reach" "$w1_log.err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $w1 was not requeued by the node check: $(cat "$w1_log".{out,err} 2>&1)$(jobs_report)"
  sleep 0.3
done
# Where the job could not re-race (its nodes cannot run this build of
# ddpctl), race-again by hand does, once Slurm shows the winner waiting again
# (it refuses before).
deadline=$((SECONDS + 90))
until [ -d "$run_dir/race/gen.2" ]; do
  run race-again "$run_id"
  [ -d "$run_dir/race/gen.2" ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "no re-race after job $w1 was requeued: $(cat "$T/out" "$T/err")$(jobs_report)"
  sleep 0.5
done
# The other shape is recorded in generation 2 once sbatch answers.
deadline=$((SECONDS + 60))
until [ "$(cat "$run_dir"/race/gen.2/jobs/* 2>/dev/null | wc -l)" -ge 2 ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 2 holds no other shape's job: $(cat "$run_dir"/race/gen.2/jobs/* 2>&1)$(jobs_report)"
  sleep 0.2
done
# Whoever re-raced (race-again by hand, or the requeuing job itself where the
# nodes run this ddpctl) recorded why, and g2 in it.
why=$(cut -d' ' -f2- "$run_dir/race/gen.2/why")
echo "generation 2: $why"
grep -qF "g2 left out, as job $w1 leaves it" <<<"$why" || fail "generation 2 does not say g2 is left out: $why"
# Re-raced by the requeuing job itself (where the nodes run this ddpctl) or by hand: either says why.
grep -qE "requeued (itself \(by the node check: node g2 cannot reach|\(PENDING)" <<<"$why" ||
  fail "generation 2 does not say why job $w1 was requeued: $why"
w2=$(cat "$run_dir"/race/gen.2/jobs/* | grep -vx "$w1" || true)
if [ -z "$w2" ] || [ "$w2" != "${w2%%$'\n'*}" ]; then fail "not one other shape raced again: $(cat "$run_dir"/race/gen.2/jobs/*)"; fi
on_login scontrol show job -o "$w2" >"$T/job2"
grep -qE "ExcNodeList=g2( |$)" "$T/job2" || fail "job $w2, raced again, does not leave g2 out: $(cat "$T/job2")"
# The blockers end: the 3-node shape can start (on g1, g3, g4 only).
# shellcheck disable=SC2046  # one id per word
on_login scancel $(cat blockers)
deadline=$((SECONDS + 90))
until [ -s "$run_dir/race/claim.2/winner" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 2 was not won within 90 s$(jobs_report)"
  sleep 0.2
done
read -r winner2 _ <"$run_dir/race/claim.2/winner"
[ "$winner2" = "$w2" ] || fail "generation 2 was won by job $winner2, not by the shape raced again (job $w2)$(jobs_report)"
wait_for_sacct "$w2" COMPLETED 90
cat logs/*_"$w2".restart0.*.out
if grep -q "training on g2" logs/*_"$w2".restart*.out; then fail "job $w2 trained on g2"; fi
[ "$(grep -l "training on" logs/*_"$w2".restart0.*.out | wc -l)" -eq 3 ] ||
  fail "job $w2's first attempt did not train on its 3 nodes: $(ls logs)"
if grep -qs "by the node check" logs/*_"$w2".err; then fail "job $w2's node check failed: $(cat logs/*_"$w2".err)"; fi
run status "$run_id"
echo "status: $(cat "$T/out")"
expect_out "g2 left out, as job $w1 leaves it"
expect_out "race winner of generation 2"
