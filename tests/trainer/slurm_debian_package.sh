#!/usr/bin/env bash
# The Debian package: built by cpack, its files and computed Depends checked,
# installed with dpkg -i, a bundled example run as written with the packaged
# binaries (ddpctl and ddp-train from /usr/bin), its man page found, then
# purged with nothing left behind.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
build=$(cd "$(dirname "$DDPCTL")/.." && pwd)
status=$(dpkg-query -W -f='${Status}' ddpctl 2>/dev/null || true)
if grep -q "install ok installed" <<<"$status"; then
  fail "ddpctl is already installed as a package on this machine; this test installs and purges its own"
fi
(cd "$build" && cpack -G DEB -B "$T/pkg") >cpack.log 2>&1 || fail "cpack failed: $(cat cpack.log)"
debs=("$T"/pkg/ddpctl_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || fail "cpack made no .deb: $(ls "$T/pkg")"
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/ddpctl ./usr/bin/ddp-train ./usr/share/ddpctl/templates/sbatch.sh.mustache \
  ./usr/share/ddpctl/configs/clusters/local.yaml ./usr/share/man/man1/ddpctl.1 ./usr/share/man/man1/ddpctl-submit.1 \
  ./usr/share/man/man5/ddpctl-spec.5 ./usr/share/bash-completion/completions/ddpctl \
  ./usr/share/zsh/vendor-completions/_ddpctl ./usr/share/doc/ddpctl/README.md \
  ./usr/share/ddpctl/examples/local-cpu.yaml; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done
info=$(dpkg-deb -I "$deb")
depends=$(sed -n 's/^ Depends: //p' <<<"$info")
# ddp-train's libraries; ddpctl itself needs only libc (DDPCTL_LIBC_ONLY).
for lib in libtorch1.13 libturbojpeg0 libstdc++6 libc6; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib (computed from the linked libraries): $depends"
done
at_exit "dpkg --purge ddpctl"
dpkg -i "$deb" >dpkg.log 2>&1 || fail "dpkg -i failed: $(cat dpkg.log)"
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
dpkg --purge ddpctl >purge.log 2>&1 || fail "dpkg --purge failed: $(cat purge.log)"
for f in /usr/bin/ddpctl /usr/bin/ddp-train /usr/share/ddpctl /usr/share/man/man1/ddpctl.1 /usr/share/doc/ddpctl; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
