#!/usr/bin/env bash
# Sites whose names cannot be files here, or cannot be told apart, are
# refused at their line before anything is submitted (no ssh call at all):
# a 240-character host once aborted `submit` after every site had queued
# its jobs; `h!x` and `h?x` were both site h_x, one going through the
# other's session.
# shellcheck source=tests/cli/sites_lib.sh
. "$(dirname "$0")/sites_lib.sh"
long=$(printf 'h%.0s' $(seq 240))
spec_with() {
  cat >job.yaml <<YAML
name: job
cluster: local
on: "$1"
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'true'
alternatives:
  - {on: "$2", nodes: 2, label: two}
YAML
}
spec_with a.org "$long"
run submit job.yaml --no-snapshot --no-preflight
expect_code 1
expect_err "job.yaml:9:10: alternatives[0].on:"
expect_err "makes a site's name of 240 bytes, too long for the files named after it here"
spec_with 'h!x' 'h?x'
run submit job.yaml --no-snapshot --no-preflight
expect_code 1
expect_err "'h!x' and 'h?x' would both be site h_x"
run gen job.yaml --stdout
expect_code 1
expect_err "would both be site h_x"
[ ! -s "$T/ssh.log" ] || fail "something was sent before the spec was checked: $(cat "$T/ssh.log")"
[ ! -d runs ] || [ -z "$(ls runs)" ] || fail "a race was recorded: $(ls runs)"
echo ok
