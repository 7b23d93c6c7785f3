#!/usr/bin/env bash
# Run here (where apt reaches Debian's archive), before a GPU run: unpacks the
# .debs that ddp-train's GPU build needs and the GPU machine lacks (CLI11 and
# nlohmann-json headers, libturbojpeg's header and library) into .gpu-deps/,
# which git ignores and the device run carries (carry: [".gpu-deps"]).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
deps=$root/.gpu-deps
exclude=$(git -C "$root" rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu-deps/' "$exclude" 2>/dev/null || echo '/.gpu-deps/' >>"$exclude"
rm -rf "$deps"
mkdir -p "$deps/debs"
(cd "$deps/debs" && apt-get download libcli11-dev nlohmann-json3-dev libturbojpeg0 libturbojpeg0-dev)
for d in "$deps"/debs/*.deb; do dpkg-deb -x "$d" "$deps"; done
rm -rf "${deps:?}/debs" "${deps:?}/usr/share"
echo "gpu deps: $(du -sh "$deps" | cut -f1) in $deps"
