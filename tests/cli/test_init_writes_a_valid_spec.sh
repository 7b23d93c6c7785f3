#!/usr/bin/env bash
# `ddpctl init`: a commented starter spec for a profile and a shape that
# `ddpctl gen` accepts as written; your program after `--`, words quoted so
# they come back as given; the bundled trainer when none; never over an
# existing file; what the profile cannot hold named at the option, with no
# file (nor scratch copy) left behind.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

# The issue's example: a partition-dialect site, 4 GPUs, a user's program.
run init --cluster gilbreth --gpus 4 --nodes 1 -- python train.py --epochs 10
expect_code 0
expect_out "wrote train.yaml: check it with \`ddpctl gen train.yaml --stdout\`"
grep -qx 'command: \[python, train.py, --epochs, "10"\]' train.yaml || fail "command line: $(grep command train.yaml)"
grep -q '^gpu_type: a100-80gb ' train.yaml || fail "no GPU type picked: $(cat train.yaml)"
grep -q '^# account: YOUR_ACCOUNT' train.yaml || fail "no account hint: $(cat train.yaml)"
run gen train.yaml --stdout
expect_code 0
expect_out "#SBATCH --partition=a100-80gb"
expect_out "#SBATCH --ntasks-per-node=4"
expect_out "python train.py --epochs 10"

# Never replaced.
before=$(cksum <train.yaml)
run init --cluster local --gpus 1
expect_code 1
expect_err "train.yaml: exists already: init never replaces a file"
[ "$(cksum <train.yaml)" = "$before" ] || fail "train.yaml changed"

# A gres site whose default partition has no GPUs: the first that holds 4.
run init --cluster local --gpus 4 --time 1:00:00 --account lusu -o gpu.yaml
expect_code 0
grep -q '^partition: a100-80gb ' gpu.yaml || fail "partition: $(cat gpu.yaml)"
grep -q '^name: gpu ' gpu.yaml || fail "name from the file: $(cat gpu.yaml)"
grep -q '^trainer:' gpu.yaml || fail "the bundled trainer by default: $(cat gpu.yaml)"
run gen gpu.yaml --stdout
expect_code 0
expect_out "#SBATCH --time=01:00:00"
expect_out "#SBATCH --account=lusu"

# CPU-only, two nodes; words YAML would misread come back as given.
run init --cluster local --gpus 0 --nodes 2 -o cpu.yaml -- python -c 'print("a b")' yes 10
expect_code 0
run gen cpu.yaml --stdout
expect_code 0
expect_out "python -c 'print(\"a b\")' yes 10"
expect_out "#SBATCH --nodes=2"

# What the profile cannot hold: named at the option, nothing written.
run init --cluster local --gpus 8 -o big.yaml
expect_code 1
expect_err "--gpus: no partition of cluster local has 8 GPUs per node"
run init --cluster local --gpu-type a10 -o typo.yaml
expect_code 1
expect_err "--gpu-type: cluster local has no GPU type a10 (did you mean 'a100'?)"
run init --cluster nosuch -o none.yaml
expect_code 1
expect_err "no cluster profile named 'nosuch'"
run init --cluster local --time 25:61:99 -o t.yaml
expect_code 1
expect_err "--time:"
left=$(find . -mindepth 1 -maxdepth 1 -printf '%f ' | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$left" = "cpu.yaml err gpu.yaml out train.yaml " ] || fail "left behind: $left"
