#!/usr/bin/env bash
# fabric_check: as users write it, in the spec and in the site's profile:
# on by default for a multi-node run whose partition has busbw_gbs (the
# job script runs `ddpctl job fabric` with the profile's figure and the
# spec's fields over the profile's), off without the figure or for one
# node; and every bad input refused at its file, line and field: a
# fraction of 0, negative or 1, a failure level above the warning level,
# a size that is none, larger than 16G or than a CPU node's memory holds, the check asked on one node or
# where the partition has no figure, a busbw_gbs of 0 or negative.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p clusters
sed 's/^  cpu: *{nodes: 4, gpus_per_node: 0,/  cpu: {nodes: 4, busbw_gbs: 1.5, gpus_per_node: 0,/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >clusters/local.yaml
grep -q "busbw_gbs: 1.5" clusters/local.yaml || fail "the profile copy has no busbw_gbs: $(grep -n 'cpu:' clusters/local.yaml)"
echo "fabric_check: {warn_below: 0.7, timeout: 20s}" >>clusters/local.yaml
export DDPCTL_CLUSTERS=$T/clusters
cp "$DDPCTL_SOURCE/configs/local-restart.yaml" job.yaml

# On by default: the profile's figure and fields, the spares in the check.
run gen job.yaml --stdout
expect_code 0
# shellcheck disable=SC2016  # the script's own words
expect_out 'ddpctl_fabric_check "${ddpctl_nodes[*]} ${ddpctl_spares[*]}"'
expect_out "--expected 1.5 --warn-below 0.7 --fail-below 0.5 --size 8M --iters 5 --timeout 20"
bash -n "$T/out" || fail "the script with the check is not valid bash"
# The spec's fields over the profile's.
run gen job.yaml --stdout --set 'fabric_check={fail_below: 0.25, size: 1M}'
expect_code 0
expect_out "--expected 1.5 --warn-below 0.7 --fail-below 0.25 --size 1M --iters 5 --timeout 20"
# Off: by the spec, for one node, or without the figure (local's own profile).
for args in "--set fabric_check=false" "--set nodes=1 --set restart.spares=0"; do
  # shellcheck disable=SC2086  # the words of $args
  run gen job.yaml --stdout $args
  expect_code 0
  if grep -q "job fabric" "$T/out"; then fail "gen $args: the check is in the script"; fi
done
DDPCTL_CLUSTERS='' run gen job.yaml --stdout
expect_code 0
if grep -q "job fabric" "$T/out"; then fail "without busbw_gbs the check is in the script"; fi

# refused FIELD MESSAGE SPEC-LINES...: gen of the spec with those lines is
# refused at fabric_check's line, naming FIELD and saying MESSAGE.
refused() {
  local field=$1 message=$2
  shift 2
  { cat job.yaml; printf '%s\n' "$@"; } >bad.yaml
  local line
  line=$(grep -n '^fabric_check' bad.yaml | cut -d: -f1)
  run gen bad.yaml --stdout
  expect_code 1
  expect_err "bad.yaml:$line"
  expect_err "$field"
  expect_err "$message"
}
refused fabric_check.warn_below "is out of range: above 0 and at most 1" "fabric_check: {warn_below: 0}"
refused fabric_check.fail_below "is out of range: above 0 and at most 1" "fabric_check: {fail_below: -0.5}"
refused fabric_check.warn_below "1 is not below 1: a fraction of the partition's busbw_gbs" "fabric_check: {warn_below: 1}"
refused fabric_check.fail_below "0.9 is above warn_below (0.8)" "fabric_check: {warn_below: 0.8, fail_below: 0.9}"
refused fabric_check.size "is not a size in bytes" "fabric_check: {size: lots}"
refused fabric_check.size "is more than 16G" "fabric_check: {size: 64G}"
# Twice the size (the buffer and Gloo's copy) beyond the 1G a node has (the spec's mem:).
refused fabric_check.size "600M, twice on a node (the buffer and Gloo's copy of it), is more than the 1G a node has (the spec's mem)" "fabric_check: {size: 600M}"
# Without mem:, the partition's 2G a node.
sed -i '/^mem:/d' job.yaml
refused fabric_check.size "1500M, twice on a node (the buffer and Gloo's copy of it), is more than the 2G a node has (partitions.cpu.mem_per_node)" "fabric_check: {size: 1500M}"
cp "$DDPCTL_SOURCE/configs/local-restart.yaml" job.yaml
refused fabric_check.timeout "must be between 5s and 30m" "fabric_check: {timeout: 1s}"
sed -i -e 's/^nodes: 2$/nodes: 1/' -e 's/^restart: .*/restart: {in_job: 1, spares: 0}/' job.yaml
refused fabric_check "shape 1x2 runs on one node: there is no fabric between nodes to check" "fabric_check: true"
cp "$DDPCTL_SOURCE/configs/local-restart.yaml" job.yaml
DDPCTL_CLUSTERS='' refused fabric_check "partition cpu has no busbw_gbs in" "fabric_check: {enabled: true}"
expect_err "ddpctl calibrate cpu --profile"
# The profile's figure: 0 or negative refused at its line.
sed -i 's/busbw_gbs: 1.5/busbw_gbs: 0/' clusters/local.yaml
run gen job.yaml --stdout
expect_code 1
expect_err "clusters/local.yaml:$(grep -n '^  cpu:' clusters/local.yaml | cut -d: -f1)"
expect_err "busbw_gbs"
echo "ok"
