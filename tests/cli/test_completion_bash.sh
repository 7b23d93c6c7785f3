#!/usr/bin/env bash
# `ddpctl completion bash` completes subcommands, flags, spec files, run
# names from the runs folder, shape labels of the spec on the line, and
# cluster profile names, as bash calls it (COMP_WORDS, COMP_CWORD).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
PATH="$(dirname "$DDPCTL"):$PATH"
export PATH
cp "$DDPCTL_SOURCE/configs/gilbreth-a100-hybrid.yaml" hybrid.yaml
mkdir -p sub runs/myrun-20261123T000000Z-abcdef
echo '{"format": 1, "name": "myrun", "cluster": "local", "created_at": "2026-11-23T00:00:00Z", "shapes": []}' \
  >runs/myrun-20261123T000000Z-abcdef/run.json
echo '{"format": 1, "run": "myrun-20261123T000000Z-abcdef", "attempts": []}' >runs/myrun-20261123T000000Z-abcdef/ledger.json
# complete WORD...: what _ddpctl offers for the last word, one per line.
complete_words() {
  bash -c 'source <("$0" completion bash) || exit 1
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ddpctl
    printf "%s\n" "${COMPREPLY[@]}"' "$DDPCTL" "$@"
}
expect_offer() {
  local want=$1; shift
  local got
  got=$(complete_words "$@")
  grep -qx -- "$want" <<<"$got" || fail "completing '$*' does not offer '$want'; it offers:"$'\n'"$got"
}
expect_offer submit ddpctl su
expect_offer status ddpctl st
expect_offer --shape ddpctl submit --sh
expect_offer --rank-by-estimate ddpctl race --ra
expect_offer hybrid.yaml ddpctl submit hy
expect_offer sub ddpctl gen s
expect_offer 4x1 ddpctl gen hybrid.yaml --shape ""
expect_offer myrun ddpctl status my
expect_offer myrun-20261123T000000Z-abcdef ddpctl logs myrun-
expect_offer gilbreth ddpctl gen hybrid.yaml --set cluster = gi
expect_offer zsh ddpctl completion z
[ -z "$(complete_words ddpctl nosuchcommand "")" ] || fail "an unknown subcommand got candidates"
# Read whole first: under pipefail, grep -q's early exit can kill the writer.
zsh_script=$("$DDPCTL" completion zsh)
grep -q "^compdef _ddpctl ddpctl" <<<"$zsh_script" || fail "the zsh script does not register itself"
echo ok
