#!/usr/bin/env bash
# The three Debian packages, built by cpack into $DDPCTL_PACKAGES, once, for
# the tests that install them (a fixture: test_packages_in_clean_debian.sh,
# tests/trainer/slurm_debian_package.sh): each one's files and computed
# Depends checked (ddpctl needs only libc; ddp-train LibTorch; python3-ddpctl,
# pure Python, python3 and no architecture). Apart from
# the Slurm test so that cpack's minute of compression is not in 22.05's
# lane, the longest.
# shellcheck source=tests/cli/lib.sh
source "$DDPCTL_SOURCE/tests/cli/lib.sh"
: "${DDPCTL_PACKAGES:?set DDPCTL_PACKAGES to the folder the packages go to}"
build=$(cd "$(dirname "$DDPCTL")/.." && pwd)
rm -rf "$DDPCTL_PACKAGES"
(cd "$build" && cpack -G DEB -B "$T/pkg") >cpack.log 2>&1 || fail "cpack failed: $(cat cpack.log)"
debs=("$T"/pkg/ddpctl_*.deb)
deb=${debs[0]}
trains=("$T"/pkg/ddp-train_*.deb)
train_deb=${trains[0]}
pys=("$T"/pkg/python3-ddpctl_*_all.deb)
py_deb=${pys[0]}
{ [ -f "$deb" ] && [ -f "$train_deb" ] && [ -f "$py_deb" ]; } || fail "cpack did not make the three packages: $(ls "$T/pkg")"
contents=$(dpkg-deb -c "$deb")
if grep -q " ./usr/bin/ddp-train\$" <<<"$contents"; then fail "the ddpctl package holds ddp-train"; fi
grep -q " ./usr/bin/ddp-train\$" <<<"$(dpkg-deb -c "$train_deb")" || fail "the ddp-train package lacks /usr/bin/ddp-train"
for f in ./usr/bin/ddpctl ./usr/share/ddpctl/templates/sbatch.sh.mustache \
  ./usr/share/ddpctl/configs/clusters/local.yaml ./usr/share/man/man1/ddpctl.1 ./usr/share/man/man1/ddpctl-submit.1 \
  ./usr/share/man/man5/ddpctl-spec.5 ./usr/share/bash-completion/completions/ddpctl \
  ./usr/share/zsh/vendor-completions/_ddpctl ./usr/share/doc/ddpctl/README.md \
  ./usr/share/ddpctl/examples/local-cpu.yaml; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done
# ddpctl needs only libc (DDPCTL_LIBC_ONLY); ddp-train's libraries are LibTorch's.
depends=$(dpkg-deb -f "$deb" Depends)
[[ "$depends" =~ ^libc6\ \(\>=\ [0-9.]+\)$ ]] || fail "ddpctl should depend on libc6 alone: $depends"
depends=$(dpkg-deb -f "$train_deb" Depends)
for lib in libtorch1.13 libturbojpeg0 libstdc++6 libc6; do
  grep -q "$lib" <<<"$depends" || fail "ddp-train's Depends lacks $lib (computed from the linked libraries): $depends"
done
# python3-ddpctl: the client where python3 finds it, nothing compiled.
py_contents=$(dpkg-deb -c "$py_deb")
for f in __init__.py client.py errors.py tune.py; do
  grep -q " ./usr/lib/python3/dist-packages/ddpctl/$f\$" <<<"$py_contents" || fail "python3-ddpctl lacks ddpctl/$f: $py_contents"
done
if grep -qvE " ./usr/(lib/python3/dist-packages/ddpctl/[a-z_]+\.py|(lib(/python3(/dist-packages(/ddpctl)?)?)?)?/?)\$" <<<"$py_contents"; then
  fail "python3-ddpctl holds more than the module: $py_contents"
fi
[ "$(dpkg-deb -f "$py_deb" Architecture)" = all ] || fail "python3-ddpctl should be Architecture: all: $(dpkg-deb -f "$py_deb")"
[[ "$(dpkg-deb -f "$py_deb" Depends)" =~ ^python3\  ]] || fail "python3-ddpctl should depend on python3 alone: $(dpkg-deb -f "$py_deb" Depends)"
mkdir -p "$DDPCTL_PACKAGES"
cp "$deb" "$train_deb" "$py_deb" "$DDPCTL_PACKAGES/"
echo "ok: $(cd "$DDPCTL_PACKAGES" && echo *.deb)"
