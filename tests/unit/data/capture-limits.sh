#!/usr/bin/env bash
# How the limits fixtures in this folder were captured (site_limits_read.hpp): on a
# local cluster (scripts/local-slurm [--slurm V] up), a QOS cap-gpu2
# (MaxTRESPerJob=gres/gpu=2, MaxWall=4h, MaxJobsPerUser=5), an account
# cap-grp (GrpTRES=gres/gpu=4, default QOS cap-gpu2) running one 3-GPU job,
# and a maintenance reservation cap-maint on every node an hour ahead; then
# each command ddpctl reads them with, into OUT/<version>/; then all of it is
# removed again.
#
#   tests/unit/data/capture-limits.sh 26.05 [OUT]   (OUT: default tests/unit/data)
set -euo pipefail
version=${1:?usage: capture-limits.sh VERSION [OUT]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}/$version
mkdir -p "$out"
ls="$here/../../../scripts/local-slurm"
s() { env -u DDPCTL_SLURM_STATE "$ls" --slurm "$version" exec -- "$@"; }
cleanup() {
  s scancel --name=cap-grp >/dev/null 2>&1 || true
  while [ -n "$(s squeue -h -n cap-grp -o %i 2>/dev/null)" ]; do sleep 0.2; done
  s scontrol delete ReservationName=cap-maint >/dev/null 2>&1 || true
  s sacctmgr -i delete user root account=cap-grp >/dev/null 2>&1 || true
  s sacctmgr -i delete account cap-grp >/dev/null 2>&1 || true
  s sacctmgr -i delete qos cap-gpu2 >/dev/null 2>&1 || true
}
cleanup
trap cleanup EXIT
s sacctmgr -i add qos cap-gpu2 MaxTRESPerJob=gres/gpu=2 MaxWall=04:00:00 MaxJobsPerUser=5 >/dev/null
s sacctmgr -i add account cap-grp Description=capture Organization=ddpctl GrpTRES=gres/gpu=4 >/dev/null
s sacctmgr -i add user root Account=cap-grp QOS=cap-gpu2,normal DefaultQOS=cap-gpu2 >/dev/null
s scontrol create reservation ReservationName=cap-maint StartTime=now+1hour Duration=120 Nodes=ALL Users=root \
  Flags=MAINT,IGNORE_JOBS >/dev/null
id=$(s sbatch --parsable -o /dev/null -A cap-grp -q normal -J cap-grp -p a100-80gb --gres=gpu:3 -t 10 --wrap 'sleep 300')
until [ "$(s squeue -h -j "$id" -o %T)" = RUNNING ]; do sleep 0.2; done
qos_format=Name,MaxTRESPerJob,MaxTRESPerNode,MaxTRESPerUser,GrpTRES,MaxWall,MaxJobsPerUser,MaxSubmitJobsPerUser,GrpJobs,GrpSubmitJobs,Flags
assoc_format=Account,User,Partition,ParentName,QOS,DefaultQOS,GrpTRES,MaxTRES,MaxTRESPerNode,MaxWall,MaxJobs,MaxSubmit,GrpJobs,GrpSubmit
s sacctmgr -n -P show qos format="$qos_format" >"$out/sacctmgr-qos.txt"
s sacctmgr -n -P show assoc where user=root format="$assoc_format" >"$out/sacctmgr-assoc-user.txt"
s sacctmgr -n -P show assoc where account=cap-grp,root format="$assoc_format" >"$out/sacctmgr-assoc-accounts.txt"
s scontrol -o show partition >"$out/scontrol-partition.txt"
s env SLURM_TIME_FORMAT=%s scontrol -o show reservation >"$out/scontrol-reservation.txt"
s scontrol show assoc_mgr users=root accounts=cap-grp,root flags=assoc,qos >"$out/scontrol-assoc-mgr.txt"
echo "captured into $out (job $id of account cap-grp running 3 GPUs)"
