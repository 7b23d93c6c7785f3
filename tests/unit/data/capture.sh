#!/usr/bin/env bash
# How the Slurm fixtures in this folder were captured: on a local cluster
# (scripts/local-slurm [--slurm V] up), one job in each state ddpctl reads,
# then every command's raw output into OUT/<version>/, named after the
# command (and the data parser, where Slurm has several).
#
#   tests/unit/data/capture.sh 26.05 [OUT]   (OUT: default tests/unit/data)
#
# Jobs: running (comment ddpctl:tokrun), held (GPUs on a100-80gb), exit 3,
# killed by signal 9, completed, cancelled while pending, and requeued
# (pending again). Re-capture for a new Slurm version and add the files to
# the golden-parse tests (test_slurm_parse.cpp).
set -euo pipefail
version=${1:?usage: capture.sh VERSION [OUT]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}/$version
mkdir -p "$out"
ls="$here/../../../scripts/local-slurm"
work=$(mktemp -d /tmp/ddpctl-capture.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
s() { "$ls" --slurm "$version" exec -- "$@"; }
submit() { s sbatch --parsable "$@"; }

run=$(submit -p cpu -J cap-run --comment=ddpctl:tokrun -t 5 --wrap 'sleep 300')
held=$(submit -H -p a100-80gb --gres=gpu:a100:4 -N 2 -J cap-held -t 10 --wrap 'true')
fail=$(submit -p cpu -J cap-fail --wrap 'echo failing; exit 3')
sig=$(submit -p cpu -J cap-signal --wrap 'kill -9 $$')
ok=$(submit -p cpu -J cap-ok --wrap 'true')
gone=$(submit -H -p cpu -J cap-cancel --wrap 'true')
s scancel "$gone"
requeued=$(submit -p cpu -J cap-requeue --requeue --wrap 'sleep 300')
# Wait until everything settled: the short jobs ended, the two long ones run.
for _ in $(seq 300); do
  states=$(s squeue -h -t all -j "$run,$fail,$sig,$ok,$requeued" -o '%i=%T' | sort | tr '\n' ' ')
  case "$states" in *PENDING* | *CONFIGURING* | *COMPLETING*) sleep 0.2 ;; *) break ;; esac
done
s scontrol requeue "$requeued"
# Pending again after the requeue's passage through an ended state.
for _ in $(seq 300); do
  [ "$(s squeue -h -t all -j "$requeued" -o '%T %r')" = "PENDING BeginTime" ] && break
  sleep 0.2
done
echo "jobs: run $run held $held fail $fail signal $sig ok $ok cancelled $gone requeued $requeued"

# --states=all: 24.11 hides ended jobs otherwise (22.05's --json ignores filters).
s squeue --json --states=all >"$out/squeue.json"
s sinfo --json >"$out/sinfo.json"
s sacct --json -X --starttime=now-1hour >"$out/sacct.json" 2>/dev/null || true
s scontrol show nodes --json >"$out/scontrol-nodes.json" 2>/dev/null || true
# Every data parser this Slurm has (`--json=list`; 22.05 has none to choose).
parsers=$(s squeue --json=list 2>&1 | sed -n 's|^data_parser/||p' | sort || true)
for parser in $parsers; do
  s squeue --json="$parser" --states=all >"$out/squeue-$parser.json" 2>/dev/null || rm -f "$out/squeue-$parser.json"
  s sinfo --json="$parser" >"$out/sinfo-$parser.json" 2>/dev/null || rm -f "$out/sinfo-$parser.json"
done
s sacct -X -n -P -o JobID,JobName,Comment,State,Reason,Partition,Account,NodeList,Submit,Start,End,TimelimitRaw,NNodes,AllocTRES,ReqTRES,ExitCode,WorkDir \
  --starttime=now-1hour >"$out/sacct.txt"
s scontrol show job -o >"$out/scontrol-job.txt"
s squeue -h -t all -o '%i|%j|%k|%T|%r|%V|%S|%e|%l|%N|%D|%b|%P|%a|%Z' >"$out/squeue-format.txt"
s sinfo --version >"$out/sinfo-version.txt"
# What a race reads to rank shapes (stderr; 25.05+ add a word after the time).
s env SLURM_TIME_FORMAT=%s sbatch --test-only -p cpu --wrap true >"$out/sbatch-test-only.txt" 2>&1 || true
# The options `sbatch:` in a spec is checked against.
s sbatch --help >"$out/sbatch-help.txt" 2>&1 || true
# squeue --jobs: filtered in --json from 23.02 (22.05 lists every job).
s squeue --json --states=all --jobs="$fail,$ok" >"$out/squeue-jobs.json"
s scancel "$run" "$held" "$requeued"
# What --json says when the controller does not answer.
"$ls" --slurm "$version" ctld stop >/dev/null
s squeue --json --states=all >"$out/squeue-controller-down.json" 2>/dev/null || true
s sinfo --json >"$out/sinfo-controller-down.json" 2>/dev/null || true
"$ls" --slurm "$version" ctld start >/dev/null
find "$out" -type f -empty -delete
