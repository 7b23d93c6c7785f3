#!/usr/bin/env bash
# In a container the job works in its run's view of the snapshot too: the
# view, the snapshot and the work tree its links lead to are bound at their
# own paths. Submitted held, the tree moved to v2 and committed, released:
# inside the image the program reads the tracked prog.txt as submitted (v1),
# the ignored data/big.bin beside tracked data/README as it is now, and
# writes into the ignored out/ of the submit folder. Charliecloud on the 22.05
# cluster, Apptainer on 26.05 (the runtimes their nodes have).
# Only where the nodes have a container runtime (Charliecloud, Apptainer):
# slurm versions: 22.05 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The local cluster's jobs run as root in a sandbox that lacks a capability
# Apptainer asks root for: --no-privs (as in test_container_apptainer_trains).
case "$SLURM_VERSION" in
  22.05) runtime=charliecloud options="[]" ;;
  26.05) runtime=apptainer options="[--no-privs]" ;;
  *) skip "no container runtime on this cluster's nodes (scripts/container-images)" ;;
esac
image=$(container_test_image "$runtime")
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
printf 'data/big*\nout/\n' >.gitignore
echo v1 >prog.txt
mkdir data out
echo "readme" >data/README
echo "big 1" >data/big.bin
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
hold: true
command: [sh, -c, 'echo "CONTENT=\$(cat prog.txt)"; echo "BIG=\$(cat data/big.bin)"; echo inside >out/x.txt; echo "WD=\$PWD"']
container:
  runtime: $runtime
  image: $image
  options: $options
YAML
git add -A && git commit -qm v1
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
expect_jobs_held
echo v2 >prog.txt
git commit -qam v2
echo "big 2" >data/big.bin
on_login scontrol release "$id"
wait_for_job "$id" COMPLETED 180
log="logs/${JOB_NAME}_$id.restart0.0.out"
workdir=$(sed -n 's/.*"workdir": "\(.*\)".*/\1/p' "$DDPCTL_RUNS/$JOB_NAME"-*/snapshot.json)
grep -qx "CONTENT=v1" "$log" || fail "in $runtime, prog.txt was not the snapshot's: $(cat "$log" "logs/${JOB_NAME}_$id.err")"
grep -qx "BIG=big 2" "$log" || fail "in $runtime, the ignored data/big.bin was not the live one: $(cat "$log")"
grep -qx "WD=$workdir" "$log" || fail "in $runtime, the program did not work in the view $workdir: $(cat "$log")"
[ "$(cat out/x.txt 2>/dev/null)" = inside ] || fail "in $runtime, out/x.txt did not land in the submit folder's out/"
