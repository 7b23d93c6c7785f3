#!/usr/bin/env bash
# The Debian packages, each installed alone in a clean Debian 12
# (debootstrap minbase, through an overlay): ddpctl needs nothing but libc —
# dpkg -i alone installs it, with no download — and works as installed
# (profiles, init, gen, man page); ddp-train pulls LibTorch through apt and
# runs; python3-ddpctl pulls python3, and `import ddpctl` there drives the
# installed ddpctl. What each costs is printed (docs/install.md "At a glance" quotes it).
# shellcheck source=tests/install/lib.sh
source "$DDPCTL_SOURCE/tests/install/lib.sh"
# Built by cpack in the fixture install_packages_build (packages_build.sh).
: "${DDPCTL_PACKAGES:?set DDPCTL_PACKAGES to the folder packages_build.sh built the packages in}"
mkdir -p share
for p in ddpctl ddp-train python3-ddpctl; do
  debs=("$DDPCTL_PACKAGES"/"${p}"_*.deb)
  [ -f "${debs[0]}" ] || fail "no $p package in $DDPCTL_PACKAGES (the fixture install_packages_build makes them): $(ls "$DDPCTL_PACKAGES" 2>&1)"
  cp "${debs[0]}" "share/$p.deb"
done
bookworm=$("$DDPCTL_SOURCE/scripts/debian-root" bookworm)

# ddpctl alone: dpkg -i, no other package, no network.
# shellcheck disable=SC2016  # run by the root's shell
in_root "$bookworm" cli '
  before=$(dpkg-query -W -f "\${Package}\n" | wc -l)
  dpkg -i /share/ddpctl.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }
  echo "packages added: $(($(dpkg-query -W -f "\${Package}\n" | wc -l) - before))"
  echo "installed size: $(dpkg-query -W -f "\${Installed-Size}" ddpctl) KiB"
  ddpctl --version
  cd /tmp
  ddpctl init --cluster gilbreth --gpus 4 -o first.yaml -- python train.py
  ddpctl gen first.yaml --stdout >first.sbatch && echo "gen: ok"
  grep -c "^#SBATCH" first.sbatch
  ls /usr/share/man/man1/ddpctl.1* /usr/share/ddpctl/configs/clusters/gilbreth.yaml
  command -v ddp-train || echo "no ddp-train"
' >cli.out 2>&1 || fail "ddpctl alone: $(cat cli.out)"
grep -qx "packages added: 1" cli.out || fail "ddpctl should install alone: $(cat cli.out)"
grep -q "^ddpctl [0-9]" cli.out || fail "ddpctl --version: $(cat cli.out)"
grep -qx "gen: ok" cli.out || fail "gen of the starter spec: $(cat cli.out)"
grep -qx "no ddp-train" cli.out || fail "the ddpctl package brought ddp-train: $(cat cli.out)"
cli_size=$(sed -n 's/^installed size: //p' cli.out)

# ddp-train alone: dpkg -i refuses it (LibTorch missing), apt brings LibTorch.
# The host's package cache is lent, so what setup downloaded is not fetched again.
# shellcheck disable=SC2016  # run by the root's shell
IN_ROOT_BINDS=/var/cache/apt/archives in_root "$bookworm" trainer '
  dpkg -i /share/ddp-train.deb >/tmp/dpkg.log 2>&1 && { echo "dpkg -i installed it without LibTorch"; exit 1; }
  grep -m 1 -o "depends on libtorch1.13[^;]*" /tmp/dpkg.log
  dpkg --purge ddp-train >/dev/null  # what dpkg -i left unconfigured
  apt-get -o Acquire::Check-Valid-Until=false -q update >/tmp/update.log 2>&1 || { cat /tmp/update.log; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /share/ddp-train.deb >/tmp/apt.log 2>&1 ||
    { tail -n 30 /tmp/apt.log; exit 1; }
  grep -E "newly installed|Need to get|After this operation" /tmp/apt.log
  ddp-train --help >/tmp/help.log 2>&1 && echo "ddp-train --help: ok" || { cat /tmp/help.log; exit 1; }
  command -v ddpctl || echo "no ddpctl"
  # The Python client beside ddpctl: apt brings python3; the module drives the binary.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /share/ddpctl.deb /share/python3-ddpctl.deb \
    >/tmp/apt-py.log 2>&1 || { tail -n 30 /tmp/apt-py.log; exit 1; }
  cd /tmp && env -u DDPCTL python3 -c "import ddpctl; print(\"python client:\", ddpctl.__file__, ddpctl.Client().version()[\"version\"])"
' >trainer.out 2>&1 || fail "ddp-train alone: $(cat trainer.out)"
grep -q "depends on libtorch1.13" trainer.out || fail "dpkg -i did not name LibTorch: $(cat trainer.out)"
grep -qx "ddp-train --help: ok" trainer.out || fail "ddp-train does not run: $(cat trainer.out)"
grep -qx "no ddpctl" trainer.out || fail "the ddp-train package brought ddpctl: $(cat trainer.out)"
grep -qx "python client: /usr/lib/python3/dist-packages/ddpctl/__init__.py [0-9.]*" trainer.out ||
  fail "python3-ddpctl's module did not drive the installed ddpctl: $(cat trainer.out)"
echo "ddpctl alone: ${cli_size}, no other package"
echo "ddp-train alone: $(grep -E "newly installed|Need to get|After this operation" trainer.out | tr '\n' ' ')"
