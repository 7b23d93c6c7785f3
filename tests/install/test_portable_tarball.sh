#!/usr/bin/env bash
# The portable tarball (scripts/portable): a static ddpctl and its data,
# unpacked under a home folder and run (1) in an empty root — the tarball and
# a static /bin/sh, no library at all — and (2) in Debian 11 (glibc 2.31,
# older than the build's). A starter spec is written and rendered with the
# bundled profiles; what needs the node (Slurm's commands) says so.
# shellcheck source=tests/install/lib.sh
source "$DDPCTL_SOURCE/tests/install/lib.sh"
portable=${DDPCTL_PORTABLE_BUILD:-$DDPCTL_SOURCE/build-portable}
tarballs=("$portable"/ddpctl-*-linux-x86_64.tar.gz)
if [ ! -f "${tarballs[0]}" ]; then
  [ -z "${DDPCTL_REQUIRE_PORTABLE:-}" ] || fail "no tarball in $portable: scripts/portable did not run"
  echo "SKIP: no tarball in $portable (scripts/portable makes it; scripts/test runs it)"
  exit 77
fi
tarball=${tarballs[0]}
top=$(basename "$tarball" -linux-x86_64.tar.gz)
listing=$(tar tzf "$tarball")
for f in bin/ddpctl share/ddpctl/templates/sbatch.sh.mustache share/ddpctl/configs/clusters/local.yaml \
  share/ddpctl/examples/local-cpu.yaml share/ddpctl/modulefiles/ddpctl/ share/man/man1/ddpctl.1 \
  share/man/man5/ddpctl-spec.5 share/doc/ddpctl/README.md; do
  grep -qx "$top/$f" <<<"$listing" || fail "the tarball lacks $top/$f"
done
if grep -q "bin/ddp-train" <<<"$listing"; then fail "the tarball holds ddp-train (it needs LibTorch)"; fi
mkdir -p share
tar -C share -xzf "$tarball"
kind=$(file "share/$top/bin/ddpctl")
[[ "$kind" == *"statically linked"* ]] || fail "not static: $kind"

# What a user runs first, from the unpacked folder; each line's output is
# checked below.
cat >share/first-steps.sh <<SH
export PATH=/share/$top/bin USER=tester HOME=/share
cd /share
ddpctl --version
ddpctl init --cluster local --gpus 0 --nodes 2 -o first.yaml
ddpctl gen first.yaml --stdout >first.sbatch
echo "gen exit \$?"
ddpctl doctor
echo "doctor exit \$?"
ddpctl submit first.yaml
echo "submit exit \$?"
ddpctl submit --no-preflight --no-snapshot first.yaml
echo "submit --no-preflight exit \$?"
SH

# 1. An empty root: the unpacked folder and a static shell, nothing else.
mkdir -p empty.upper/bin
cp "$(command -v busybox)" empty.upper/bin/sh
kind=$(file empty.upper/bin/sh)
[[ "$kind" == *"statically linked"* ]] || fail "busybox is not static: $kind"
in_root "" empty "/bin/sh /share/first-steps.sh" >empty.out 2>&1 || true
check_first_steps() {
  local out=$1
  grep -q "^ddpctl [0-9]" "$out" || fail "no version: $(cat "$out")"
  grep -q "^wrote first.yaml" "$out" || fail "init did not write: $(cat "$out")"
  grep -q "^gen exit 0" "$out" || fail "gen failed: $(cat "$out")"
  grep -q "^#SBATCH --nodes=2" share/first.sbatch || fail "the script: $(cat share/first.sbatch)"
  grep -q "Slurm's commands do not work here ('sinfo' was not found on PATH)" "$out" ||
    fail "doctor does not say sinfo is missing: $(cat "$out")"
  grep -q "^doctor exit 1" "$out" || fail "doctor: $(cat "$out")"
  grep -q "cannot ask Slurm about its nodes ('sinfo' was not found on PATH)" "$out" ||
    fail "submit does not say sinfo is missing: $(cat "$out")"
  grep -q "sbatch.*not found\|'sbatch' was not found" "$out" ||
    fail "submit --no-preflight does not say sbatch is missing: $(cat "$out")"
  grep -q "^submit --no-preflight exit 1" "$out" || fail "submit --no-preflight: $(cat "$out")"
  rm -f share/first.yaml share/first.sbatch
  rm -rf share/runs share/logs
}
check_first_steps empty.out
echo "empty root: ddpctl ran with no library at all"

# 2. Debian 11: glibc 2.31.
bullseye=$("$DDPCTL_SOURCE/scripts/debian-root" bullseye)
grep -q "2.31" "$bullseye/.ddpctl-debian-root" || fail "not glibc 2.31: $(cat "$bullseye/.ddpctl-debian-root")"
in_root "$bullseye" bullseye "/bin/sh /share/first-steps.sh" >bullseye.out 2>&1 || true
check_first_steps bullseye.out
echo "Debian 11 ($(cat "$bullseye/.ddpctl-debian-root")): ddpctl ran"
