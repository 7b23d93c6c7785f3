#!/usr/bin/env bash
# slurm versions: 22.05
# From the user's own machine with the portable ddpctl (the static build
# unpacked under their home, as docs/install.md says), against a login host
# with no ddpctl of this version: submit --on sends this ddpctl and its data
# there, checked by SHA-256, into ~/.local/share/ddpctl/<version>-<commit>/,
# and the job runs with it (the job agent is the installed copy). The next
# submit uses that install without sending it again. (One Slurm version:
# what is tested is the install under the login host's home, not Slurm.)
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
portable=${DDPCTL_PORTABLE_BUILD:-$DDPCTL_SOURCE/build-portable}
tarballs=("$portable"/ddpctl-*-linux-x86_64.tar.gz)
if [ ! -f "${tarballs[0]}" ]; then
  [ -z "${DDPCTL_REQUIRE_PORTABLE:-}" ] || fail "no tarball in $portable: scripts/portable did not run"
  skip "no portable tarball in $portable (scripts/portable makes it; scripts/test runs it)"
fi
mkdir -p "$HOME/opt"
tar -C "$HOME/opt" -xzf "${tarballs[0]}"
here=$(echo "$HOME"/opt/ddpctl-*/bin/ddpctl)
[ -x "$here" ] || fail "the tarball has no bin/ddpctl"
version=$("$here" --version)
# "ddpctl 0.1.0 (git 1a2b3c4d5e6f)" -> 0.1.0-1a2b3c4d5e6f
folder=$(sed -e 's/^ddpctl //' -e 's/ (git /-/' -e 's/)$//' <<<"$version")
# The login host: no ddpctl on its PATH, none installed (its home is root's).
rm -f "$state/user-bin/ddpctl"
user_machine
remote_home=$(ssh -F "$HOME/.ssh/config" -o BatchMode=yes "$host" 'echo "$HOME"')
if [ -z "$remote_home" ] || [ "$remote_home" = / ]; then fail "the login host's home is '$remote_home'"; fi
installed=$remote_home/.local/share/ddpctl/$folder
rm -rf "$installed"
at_exit "rm -rf '$installed'"
cluster=$T/cluster
export DDPCTL_RUNS=$cluster/runs
mkdir -p "$HOME/proj"
cd "$HOME/proj"
git init -q
git config user.email test@example.org
git config user.name test
echo 'echo "trained"' >train.sh
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: [bash, train.sh]
YAML
submit_here() {
  set +e
  env -u DDPCTL_RUNS "$here" submit job.yaml --on "$host" --remote-dir "$cluster" "$@" >"$T/rout" 2>"$T/rerr"
  rcode=$?
  set -e
}

# 1. Installed, checked, and used for the job.
submit_here
echo "submit --on with no ddpctl there: $(cat "$T/rout" "$T/rerr")"
[ "$rcode" -eq 0 ] || fail "submit --on ended with $rcode: $(cat "$T/rout" "$T/rerr")"
grep -qF "with $installed/bin/ddpctl, this version's portable build, installed there now from this ddpctl ($(dirname "$(dirname "$here")"))" "$T/rerr" ||
  fail "submit --on does not say it installed this ddpctl there: $(cat "$T/rerr")"
grep -qE "sent; 4 ssh call\(s\)$" "$T/rerr" || fail "expected 4 ssh calls (probe, install, code, submit): $(cat "$T/rerr")"
[ "$("$installed/bin/ddpctl" --version)" = "$version" ] || fail "the installed ddpctl is not this version"
[ -f "$installed/share/ddpctl/templates/sbatch.sh.mustache" ] || fail "the install lacks its data: $(find "$installed" -maxdepth 3)"
[ -z "$(find "$remote_home/.local/share/ddpctl" -maxdepth 1 -name '.incoming*')" ] || fail "the install left its transfer behind"
id=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/rout")
[ -n "$id" ] || fail "no job id: $(cat "$T/rout")"
wait_for_sacct "$id" COMPLETED 90
run_dir=$(find "$cluster/runs" -mindepth 1 -maxdepth 1 -name "$JOB_NAME-*" -type d)
grep -rqF "$installed/bin/ddpctl" "$run_dir"/*.sh 2>/dev/null || grep -rqF "$installed/bin/ddpctl" "$run_dir" ||
  fail "the job's script does not run the installed ddpctl: $(ls "$run_dir")"

# 2. The next submit uses it, and sends nothing but the spec.
submit_here --again
[ "$rcode" -eq 0 ] || fail "the second submit --on ended with $rcode: $(cat "$T/rout" "$T/rerr")"
grep -qF "with $installed/bin/ddpctl, this version, installed there by ddpctl (no ddpctl on the PATH)" "$T/rerr" ||
  fail "the second submit --on did not use the install: $(cat "$T/rerr")"
grep -qE "was there already; 2 ssh call\(s\)$" "$T/rerr" || fail "expected 2 ssh calls: $(cat "$T/rerr")"
id2=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$T/rout")
wait_for_sacct "$id2" COMPLETED 90

# 3. status --on runs with it too.
set +e
env -u DDPCTL_RUNS "$here" status --on "$host" --remote-dir "$cluster" >"$T/rout" 2>"$T/rerr"
rcode=$?
set -e
[ "$rcode" -eq 0 ] || fail "status --on ended with $rcode: $(cat "$T/rerr")"
grep -qF "$id2" "$T/rout" || fail "status --on does not show job $id2: $(cat "$T/rout")"
