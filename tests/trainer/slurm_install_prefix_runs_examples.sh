#!/usr/bin/env bash
# `cmake --install` to a prefix, the prefix moved elsewhere, and a bundled
# example submitted as written (no trainer.program): the installed ddpctl
# finds its templates, profiles and the ddp-train beside it from its own
# place, and the job trains to COMPLETED. Then the prefix's Lmod module in a
# clean login shell.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
build=$(cd "$(dirname "$DDPCTL")/.." && pwd)
cmake --install "$build" --prefix "$T/prefix" >install.log 2>&1 || fail "cmake --install failed: $(cat install.log)"
mv "$T/prefix" "$T/moved"
ddpctl="$T/moved/bin/ddpctl"
for f in bin/ddp-train share/ddpctl/templates/sbatch.sh.mustache share/ddpctl/configs/clusters/local.yaml \
  share/man/man1/ddpctl.1 share/man/man5/ddpctl-spec.5 share/bash-completion/completions/ddpctl \
  share/ddpctl/modulefiles/ddpctl/0.1.0.lua share/ddpctl/examples/local-cpu.yaml \
  share/ddpctl/examples/scaling/resnet50-tin-sweep.yaml; do
  [ -e "$T/moved/$f" ] || fail "the installed prefix lacks $f: $(cd "$T/moved" && find . | sort)"
done
# As a user runs it: no ddp-train on PATH, no DDPCTL_TRAINER, no source tree;
# the example as installed.
unset DDPCTL_TRAINER
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
cp "$T/moved/share/ddpctl/examples/local-cpu.yaml" job.yaml
sed -i "s/^name: local-cpu$/name: $JOB_NAME/" job.yaml
"$ddpctl" gen job.yaml --stdout >gen.out || fail "gen with the moved prefix failed"
grep -q "^  $T/moved/bin/ddp-train --nproc-per-node=2" gen.out || fail "the script does not run the installed ddp-train: $(grep ddp-train gen.out)"
set +e
"$LOCAL_SLURM" exec -- "$ddpctl" submit job.yaml --follow >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 0
expect_out "COMPLETED"
# The environment module, in a clean login shell (Debian's Lmod).
[ -r /etc/profile.d/lmod.sh ] || fail "Lmod is not installed (scripts/setup installs it)"
module_out=$(env -i HOME="$T" TERM=dumb PATH=/usr/bin:/bin bash -l -c \
  "module use '$T/moved/share/ddpctl/modulefiles' && module load ddpctl && ddpctl --version && man -w ddpctl && echo \"trainer=\$DDPCTL_TRAINER\"" 2>&1) ||
  fail "module load ddpctl failed: $module_out"
grep -q "^ddpctl 0.1.0 (git " <<<"$module_out" || fail "ddpctl --version after module load: $module_out"
grep -q "^$T/moved/share/man/man1/ddpctl.1" <<<"$module_out" || fail "man -w ddpctl after module load: $module_out"
grep -q "^trainer=$T/moved/bin/ddp-train" <<<"$module_out" || fail "the module does not name its ddp-train: $module_out"
