#!/usr/bin/env bash
# The project's own shell scripts pass shellcheck.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
command -v shellcheck >/dev/null || fail "shellcheck is not installed (scripts/setup installs it)"
cd "$DDPCTL_SOURCE"
shellcheck -x --severity=style scripts/* .ci/run tests/golden/check tests/layers/check tests/layers/*.sh tests/cli/*.sh tests/script/*.sh tests/script/stub tests/cli/fake_slurm tests/slurm/*.sh tests/trainer/*.sh tests/install/*.sh bench/*.sh || fail "shellcheck found problems"
echo ok
