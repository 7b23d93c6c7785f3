#!/usr/bin/env bash
# The snapshot is the whole code, whatever path the program opens it by: a
# job reads its tracked prog.txt by a relative path only after the tree has
# moved to v2 (committed; the job waits for a flag the test touches after the
# commit) and prints CONTENT=v1. What the snapshot leaves out stays live and
# is written where docs/runs.md says: an ignored file beside tracked code is
# read as it is now, a file written into an ignored folder lands in the
# submit folder's, a new top-level file stays in the run's working directory
# (<run>/workdir), which the batch log names; sbatch's --chdir is that view,
# and the logs are the submit folder's.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
printf 'data/big*\nout/\n' >.gitignore
echo v1 >prog.txt
mkdir data out
echo "readme v1" >data/README
echo "big 1" >data/big.bin
# The program, as a list (no file of the snapshot named on it): reads by
# relative paths, and writes by relative paths too.
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [sh, -c, 'n=0; until [ -e out/go ]; do n=$((n + 1)); [ "$n" -lt 1500 ] || { echo "no out/go after 300 s"; exit 3; }; sleep 0.2; done; echo "CONTENT=$(cat prog.txt)"; echo "README=$(cat data/README)"; echo "BIG=$(cat data/big.bin)"; echo "written by the job" >results.txt; echo checkpoint >out/ckpt.txt; echo "WD=$PWD"']
YAML
git add -A && git commit -qm v1

run submit job.yaml
expect_code 0
id=$(submitted_job_id)

# The tree moves to v2, committed; the ignored data changes too; then the job may read.
echo v2 >prog.txt
echo "readme v2" >data/README
git commit -qam v2
echo "big 2" >data/big.bin
touch out/go
wait_for_job "$id" COMPLETED 120
log="logs/${JOB_NAME}_$id.restart0.0.out"
[ -r "$log" ] || fail "no step log $log in the submit folder: $(ls -R logs 2>&1)"
grep -qx "CONTENT=v1" "$log" || fail "the job read prog.txt live, not from the snapshot: $(cat "$log")"
grep -qx "README=readme v1" "$log" || fail "the job read the tracked data/README live: $(cat "$log")"
grep -qx "BIG=big 2" "$log" || fail "the ignored data/big.bin beside it was not read live: $(cat "$log")"
run_dir=$(ls -d "$DDPCTL_RUNS/$JOB_NAME"-*/)
run_dir=${run_dir%/}
workdir=$(sed -n 's/.*"workdir": "\(.*\)".*/\1/p' "$run_dir/snapshot.json")
[ "$workdir" = "$run_dir/workdir" ] || fail "snapshot.json records no working directory $run_dir/workdir: $(cat "$run_dir/snapshot.json")"
grep -q -- "\"--chdir=$workdir\"" "$run_dir/ledger.json" || fail "sbatch was not given --chdir=$workdir: $(cat "$run_dir/ledger.json")"
grep -qx "WD=$workdir" "$log" || fail "the job did not work in $workdir: $(cat "$log")"
# Outputs: into an ignored folder, the submit folder's; a new top-level file, the view's.
[ "$(cat out/ckpt.txt 2>/dev/null)" = "checkpoint" ] || fail "out/ckpt.txt is not in the submit folder: $(ls -la out)"
[ ! -e results.txt ] || fail "results.txt landed in the submit folder; docs/runs.md says it stays in the view"
[ "$(cat "$workdir/results.txt" 2>/dev/null)" = "written by the job" ] ||
  fail "results.txt is not in the run's working directory $workdir: $(ls -la "$workdir")"
grep -qF "ddpctl: the job wrote 1 file(s) into its working directory, which stay in $workdir (not the submit folder): results.txt" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch log does not name the file the job wrote: $(cat "logs/${JOB_NAME}_$id.err")"
# The snapshot itself was not written to.
snap=$(sed -n 's/.*"dir": "\(.*\)".*/\1/p' "$run_dir/snapshot.json")
[ ! -e "$snap/results.txt" ] || fail "the job wrote into the shared snapshot $snap"
