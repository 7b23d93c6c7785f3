#!/usr/bin/env bash
# ddpctl runs inside jobs on compute nodes, which may have other libraries
# than the login node (the local 24.11 and 26.05 clusters' nodes are newer
# Debians): built with DDPCTL_LIBC_ONLY (the default) it needs nothing but
# the C library and libm.
# shellcheck source=tests/cli/lib.sh
source "$DDPCTL_SOURCE/tests/cli/lib.sh"
[ "${DDPCTL_LIBC_ONLY:-ON}" = ON ] || { echo "built with DDPCTL_LIBC_ONLY=OFF: nothing to check"; exit 77; }
needed=$(readelf -d "$DDPCTL" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
[ -n "$needed" ] || fail "readelf found no NEEDED entries in $DDPCTL"
for lib in $needed; do
  case "$lib" in
    libc.so.6 | libm.so.6 | ld-linux-*.so.*) ;;  # the C library's own parts
    *) fail "$DDPCTL needs $lib (all: $needed); with DDPCTL_LIBC_ONLY it should need only the C library (libc, libm)" ;;
  esac
done
"$DDPCTL" --version >/dev/null || fail "ddpctl --version failed"
