#!/usr/bin/env bash
# A mistyped subcommand gets a suggestion and the usage exit code.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
run gne spec.yaml
expect_code 2
expect_err "ddpctl: error: unknown command 'gne' (did you mean 'gen'?); commands: gen"
run --version
expect_code 0
expect_out "ddpctl "
echo ok
