#!/usr/bin/env bash
# On the GPU machine: builds ddp-train (and make_tiny_imagenet) against the
# CUDA LibTorch of the machine's python3 torch into build-gpu/, with the
# headers and libturbojpeg that bench/gpu/fetch-deps.sh unpacked into
# .gpu-deps/ here. One call: bench/gpu/build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_GPU:-$root/build-gpu}
[ -d "$root/.gpu-deps/usr/include" ] ||
  { echo "build-gpu: $root/.gpu-deps is missing: run bench/gpu/fetch-deps.sh where apt works, and carry .gpu-deps" >&2; exit 1; }
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
echo "build-gpu: torch $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)'), prefix $prefix"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root/bench/gpu" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTORCH_CUDA_ARCH_LIST=9.0
cmake --build "$build" -j "$(nproc)"
echo "build-gpu: $build/trainer/ddp-train"
