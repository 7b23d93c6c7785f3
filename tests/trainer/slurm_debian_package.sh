#!/usr/bin/env bash
# The two Debian packages (built, and their files and Depends checked, by
# tests/install/packages_build.sh, this test's fixture): both installed with
# dpkg -i, a bundled example run as written with the packaged binaries
# (ddpctl and ddp-train from /usr/bin), the man page found, then purged with
# nothing left behind. (Each alone in a clean Debian 12:
# test_packages_in_clean_debian.sh.)
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
for p in ddpctl ddp-train; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if grep -q "install ok installed" <<<"$status"; then
    fail "$p is already installed as a package on this machine; this test installs and purges its own"
  fi
done
debs=("$DDPCTL_PACKAGES"/ddpctl_*.deb)
deb=${debs[0]}
trains=("$DDPCTL_PACKAGES"/ddp-train_*.deb)
train_deb=${trains[0]}
{ [ -f "$deb" ] && [ -f "$train_deb" ]; } ||
  fail "no packages in $DDPCTL_PACKAGES (the fixture install_packages_build makes them): $(ls "$DDPCTL_PACKAGES" 2>&1)"
at_exit "dpkg --purge ddp-train ddpctl"
dpkg -i "$deb" "$train_deb" >dpkg.log 2>&1 || fail "dpkg -i failed: $(cat dpkg.log)"
for f in /usr/bin/ddpctl /usr/bin/ddp-train; do [ -x "$f" ] || fail "dpkg -i did not install $f"; done
man -w ddpctl >man.out 2>&1 || fail "man -w ddpctl: $(cat man.out)"
grep -q "^/usr/share/man/man1/ddpctl.1" man.out || fail "man -w ddpctl found $(cat man.out)"
unset DDPCTL_TRAINER
cp /usr/share/ddpctl/examples/local-cpu.yaml job.yaml
sed -i "s/^name: local-cpu$/name: $JOB_NAME/" job.yaml
set +e
"$LOCAL_SLURM" exec -- /usr/bin/ddpctl submit job.yaml --follow >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 0
expect_out "COMPLETED"
grep -q "ddp-train --nproc-per-node=2" "$(only_run_dir)"/*.sbatch || fail "the job did not run the packaged ddp-train"
dpkg --purge ddp-train ddpctl >purge.log 2>&1 || fail "dpkg --purge failed: $(cat purge.log)"
for f in /usr/bin/ddpctl /usr/bin/ddp-train /usr/share/ddpctl /usr/share/man/man1/ddpctl.1 /usr/share/doc/ddpctl; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
