#!/usr/bin/env bash
# --templates DIR with only sbatch.sh.mustache (no parts) replaces the whole
# bundled template; {{x}} is shell-quoted, {{{x}}} raw.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir tpl
printf '#!/bin/bash\n# {{{job_name}}}\necho {{output_dir}}\n' > tpl/sbatch.sh.mustache
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout --templates tpl --set 'output_dir=/data/ünï logs'
expect_code 1
expect_err "output_dir: '/data/ünï logs' must be a path"
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout --templates tpl --set 'output_dir=/data/ünï'
expect_code 0
expect_out "# local-cpu"
expect_out "echo '/data/ünï'"
run gen "$DDPCTL_SOURCE/configs/local-cpu.yaml" --stdout --templates nowhere
expect_code 1
expect_err "nowhere: templates folder not found"
echo ok
