#!/usr/bin/env bash
# A progress pattern of 90,000 characters or nested 20,000 deep is compiled
# or refused at its line, never a crash: std::regex, which ddpctl used before
# RE2, died of SIGSEGV in gen on both, with no message.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
spec() {
  printf 'name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [prog]\nprogress: {pattern: '"'"'%s'"'"'}\n' "$1" >p.yaml
}
long=$(printf 'x%.0s' $(seq 90000))
spec "Epoch (?<epoch>\\d+) $long"
run gen p.yaml -o out90
[ "$code" -lt 128 ] || fail "gen died of signal $((code - 128)) on a 90,000-character pattern"
[ "$code" -eq 0 ] || expect_err "p.yaml:6:21: progress.pattern:"

open=$(printf '(%.0s' $(seq 20000))
close=$(printf ')%.0s' $(seq 20000))
spec "Epoch (?<epoch>\\d+)${open}x${close}"
run gen p.yaml -o out20k
[ "$code" -lt 128 ] || fail "gen died of signal $((code - 128)) on a pattern nested 20,000 deep"
[ "$code" -eq 0 ] || expect_err "p.yaml:6:21: progress.pattern:"

# What the engine cannot do is refused at the line, in its words.
spec 'Epoch (?<epoch>\d+)(?=x)'
run gen p.yaml -o outla
expect_code 1
expect_err "p.yaml:6:21: progress.pattern: 'Epoch (?<epoch>\\d+)(?=x)' is not a regular expression ddpctl can use (RE2 syntax: no backreferences or lookaround): invalid perl operator: (?="
echo ok
