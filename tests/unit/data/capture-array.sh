#!/usr/bin/env bash
# How the job array fixtures in this folder were captured: on a local
# cluster (scripts/local-slurm [--slurm V] up), one array in each state a
# sweep is read in, and what each of ddpctl's readers gets for it, into
# OUT/<version>/array-<state>-<reader>:
#
#   pending   sbatch --array=0-5%2 --hold: one collapsed record, 123_[0-5%2]
#   running   the same array released: tasks 0 and 1 run, 123_[2-5%2] waits
#             (JobArrayTaskLimit)
#   finished  sbatch --array=0-3%2 of a script that exits 3 in task 1: three
#             COMPLETED tasks, one FAILED
#
# and for each: squeue --json --states=all --jobs=ID (.json; 22.05's --json
# ignores --jobs, so its document is trimmed to the array's records, meta
# kept), squeue's format string as ddpctl asks for it with --jobs=ID
# (-format.txt, '|' in place of ddpctl's unit separator) and sacct -X -P as
# ddpctl asks with --jobs=ID (-sacct.txt), each with SLURM_BITSTR_LEN=0 as
# ddpctl sets it (else a list longer than 64 characters is cut short: the
# -cut files show that); the running array also with each data parser this
# Slurm has (-squeue-v0.0.NN.json). Run it under the version's lock:
#
#   flock /tmp/ddpctl-slurm-26.05.lock tests/unit/data/capture-array.sh 26.05 [OUT]
#
# The format strings below must stay those of src/slurm/slurm.cpp (kSqueueFormat,
# kSacctFormat); test_slurm_parse_arrays.cpp reads the files.
set -euo pipefail
version=${1:?usage: capture-array.sh VERSION [OUT]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}/$version
mkdir -p "$out"
ls="$here/../../../scripts/local-slurm"
work=$(mktemp -d /tmp/ddpctl-capture-array.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
s() { "$ls" --slurm "$version" exec -- "$@"; }
sf() { s env SLURM_BITSTR_LEN=0 "$@"; }
squeue_format='%i|%j|%k|%T|%r|%V|%S|%e|%l|%N|%D|%b|%P|%a|%Z|%A|%F|%K'
sacct_format=JobID,JobName,Comment,State,Reason,Partition,Account,NodeList,Submit,Start,End,TimelimitRaw,NNodes,AllocTRES,ReqTRES,ExitCode,WorkDir,JobIDRaw

# Every record of array $1 (its tasks' own job ids differ from it).
trim_json() {
  python3 -c '
import json, sys
doc = json.load(sys.stdin)
def number(v):
    return v.get("number") if isinstance(v, dict) else v
doc["jobs"] = [j for j in doc["jobs"] if str(number(j.get("array_job_id"))) == sys.argv[1]]
json.dump(doc, sys.stdout, indent=2)
print()' "$1"
}
capture() {  # STATE ARRAY_ID
  # Accounting hears of a new record a moment later (22.05: about 2 s).
  for _ in $(seq 300); do
    [ "$(sf sacct -X -n -P -o JobID --jobs="$2" --starttime=1970-01-01 | wc -l)" = "$(s squeue -h -t all -j "$2" -o %i | wc -l)" ] && break
    sleep 0.2
  done
  sf squeue --json --states=all --jobs="$2" | trim_json "$2" >"$out/array-$1-squeue.json"
  sf squeue -h -a -t all --jobs="$2" -o "$squeue_format" >"$out/array-$1-format.txt"
  sf sacct -X -n -P -o "$sacct_format" --jobs="$2" --starttime=1970-01-01 >"$out/array-$1-sacct.txt"
}
states() { s squeue -h -t all -j "$1" -o '%K=%T' | sort | tr '\n' ' '; }

held=$(s sbatch --parsable --hold --array=0-5%2 -p cpu -J cap-array --comment=ddpctl:tokarray -t 5 --wrap 'sleep 300')
capture pending "$held"
s scontrol release "$held"
# Two tasks running, and the rest one record waiting for the throttle.
for _ in $(seq 300); do
  case "$(states "$held")" in "0=RUNNING 1=RUNNING 2-5%2=PENDING ") break ;; esac
  sleep 0.2
done
[ "$(states "$held")" = "0=RUNNING 1=RUNNING 2-5%2=PENDING " ] || { echo "running array did not settle: $(states "$held")" >&2; exit 1; }
# sacct learns of a start a moment after squeue shows it.
for _ in $(seq 300); do
  [ "$(s sacct -X -n -P -o State --jobs="$held" --starttime=1970-01-01 | grep -c RUNNING)" = 2 ] && break
  sleep 0.2
done
capture running "$held"
parsers=$(s squeue --json=list 2>&1 | sed -n 's|^data_parser/||p' | sort || true)
for parser in $parsers; do
  sf squeue --json="$parser" --states=all --jobs="$held" | trim_json "$held" >"$out/array-running-squeue-$parser.json"
done
s scancel "$held"

# Scattered tasks (a retry of failed cells), pending: their list is longer
# than 64 characters, and cut short unless SLURM_BITSTR_LEN=0.
scattered=1,3,4,7,9,12,15,16,20,23,27,30,31,35,38,41,44,46,50,53,57,61,64,68,70,73,77,80,84,88,91,95,99
long=$(s sbatch --parsable --hold --array=$scattered%3 -p cpu -J cap-array-long --comment=ddpctl:toklong -t 5 --wrap true)
capture scattered "$long"
s squeue -h -a -t all --jobs="$long" -o "$squeue_format" >"$out/array-scattered-format-cut.txt"
s sacct -X -n -P -o "$sacct_format" --jobs="$long" --starttime=1970-01-01 >"$out/array-scattered-sacct-cut.txt"
s scancel "$long"

cat >"$work/array.sh" <<'EOF'
#!/bin/bash
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID is job $SLURM_JOB_ID"
if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then exit 3; fi
EOF
done_id=$(s sbatch --parsable --array=0-3%2 -p cpu -J cap-array-end --comment=ddpctl:tokend -t 5 -o "$work/%A_%a.out" "$work/array.sh")
for _ in $(seq 600); do
  case "$(states "$done_id")" in "0=COMPLETED 1=FAILED 2=COMPLETED 3=COMPLETED ") break ;; esac
  sleep 0.2
done
[ "$(states "$done_id")" = "0=COMPLETED 1=FAILED 2=COMPLETED 3=COMPLETED " ] || { echo "finished array did not end as planned: $(states "$done_id")" >&2; exit 1; }
for _ in $(seq 300); do
  [ "$(s sacct -X -n -P -o State --jobs="$done_id" --starttime=1970-01-01 | sort | tr '\n' ' ')" = "COMPLETED COMPLETED COMPLETED FAILED " ] && break
  sleep 0.2
done
capture finished "$done_id"
s sinfo --version >"$out/array-sinfo-version.txt"
echo "$version: pending/running array $held, finished array $done_id, scattered $long"
