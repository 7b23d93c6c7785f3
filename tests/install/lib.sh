#!/usr/bin/env bash
# Sourced by the install tests: root, a scratch folder (tests/cli/lib.sh), and
# chroots through an overlay so that the cached Debian roots stay clean.
# shellcheck source=tests/cli/lib.sh
source "$DDPCTL_SOURCE/tests/cli/lib.sh"
[ "$(id -u)" -eq 0 ] || fail "the install tests make chroots: run them as root (CI does)"

# in_root LOWER NAME CMD...: CMD (a shell line, run by the root's /bin/sh) in
# a chroot of LOWER seen through an overlay ($T/NAME.upper keeps what it
# writes, so a later in_root of the same NAME sees it), with /proc, and
# $T/share at /share, and each host folder of $IN_ROOT_BINDS (space-separated)
# at its own path. LOWER "" is an empty root ($T/NAME.upper alone).
in_root() {
  local lower=$1 name=$2 cmd=$3
  mkdir -p "$T/$name.upper" "$T/$name.work" "$T/$name.root" "$T/share"
  # shellcheck disable=SC2016  # expanded by the inner shell
  unshare --mount --propagation private sh -c '
    set -e
    lower=$1 upper=$2 work=$3 root=$4 share=$5 cmd=$6 binds=$7
    if [ -n "$lower" ]; then
      mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$root"
    else
      mount --bind "$upper" "$root"
    fi
    mkdir -p "$root/proc" "$root/share" "$root/tmp"
    mount -t proc proc "$root/proc"
    mount --bind "$share" "$root/share"
    for b in $binds; do mkdir -p "$root$b" && mount --bind "$b" "$root$b"; done
    exec chroot "$root" /bin/sh -c "$cmd"' in-root "$lower" "$T/$name.upper" "$T/$name.work" "$T/$name.root" \
    "$T/share" "$cmd" "${IN_ROOT_BINDS:-}"
}
