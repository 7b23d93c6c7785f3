#!/usr/bin/env bash
# `ddpctl container import SPEC`: a registry image imported once into a file
# for a multi-node job. The runtime's own tool does it (enroot import for
# Pyxis, apptainer pull), here fakes first on PATH that record their
# arguments and write the file; ddpctl says what to set as the image. A
# spec whose image is a file already, and an output that exists, are refused.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p fakebin images
for tool in enroot apptainer; do
  cat >"fakebin/$tool" <<'SH'
#!/bin/sh
echo "$(basename "$0") $*" >>"$CALLS"
# The output file is the argument after --output (enroot) or after pull (apptainer).
out=
prev=
for a in "$@"; do
  { [ "$prev" = --output ] || [ "$prev" = pull ]; } && out=$a
  prev=$a
done
[ -n "$out" ] && echo image >"$out"
SH
  chmod +x "fakebin/$tool"
done
export CALLS="$T/calls" PATH="$T/fakebin:$PATH"
cat >pyxis.yaml <<'YAML'
name: ngc
cluster: local
partition: gpu
nodes: 2
gpus_per_node: 1
command: [python3, train.py]
container:
  runtime: pyxis
  image: docker://nvcr.io/nvidia/pytorch:25.01-py3
YAML
run container import pyxis.yaml --folder images
[ "$code" -eq 0 ] || fail "import failed: $(cat "$T/err")"
grep -qxF "enroot import --output images/nvcr.io+nvidia+pytorch+25.01-py3.sqsh docker://nvcr.io#nvidia/pytorch:25.01-py3" calls ||
  fail "enroot was not called as expected: $(cat calls 2>&1)"
[ -s images/nvcr.io+nvidia+pytorch+25.01-py3.sqsh ] || fail "no image file written"
grep -qF "set it in the spec: container: {image: $T/images/nvcr.io+nvidia+pytorch+25.01-py3.sqsh}" out ||
  fail "stdout does not say what to set: $(cat out)"
grep -qF "ddpctl: importing: enroot import" err || fail "stderr does not say what runs: $(cat err)"

# The output exists: refused, the tool not called again.
run container import pyxis.yaml --folder images
[ "$code" -eq 1 ] || fail "an existing output was not refused"
grep -qF "exists already; remove it or choose another --output" err || fail "$(cat err)"
[ "$(wc -l <calls)" -eq 1 ] || fail "the tool ran again: $(cat calls)"

# Apptainer pulls to a .sif.
sed -e 's/runtime: pyxis/runtime: apptainer/' pyxis.yaml >apptainer.yaml
run container import apptainer.yaml -o images/pytorch.sif
[ "$code" -eq 0 ] || fail "apptainer import failed: $(cat err)"
grep -qxF "apptainer pull images/pytorch.sif docker://nvcr.io/nvidia/pytorch:25.01-py3" calls || fail "$(cat calls)"

# An image that is a file: nothing to import, at the spec's line.
sed -e 's|image: docker://.*|image: /shared/x.sif|' apptainer.yaml >file.yaml
run container import file.yaml
[ "$code" -eq 1 ] || fail "a file image was not refused"
grep -qF "file.yaml:9:10: container.image: /shared/x.sif is a file already: there is nothing to import" err || fail "$(cat err)"
echo ok
