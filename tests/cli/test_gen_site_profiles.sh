#!/usr/bin/env bash
# Site-wide profiles (an admin's, e.g. from `ddpctl doctor -o`) are found
# after the user's own and before the bundled ones.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p site "$HOME/.config/ddpctl/clusters"
sed 's/^name: local$/name: mysite/; s/^default_partition: cpu$/default_partition: gpu/' \
  "$DDPCTL_SOURCE/configs/clusters/local.yaml" >site/mysite.yaml
export DDPCTL_SITE_CLUSTERS="$T/site"
cat >job.yaml <<'YAML'
name: j
cluster: mysite
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
run gen job.yaml --stdout
expect_code 0
expect_out "#SBATCH --partition=gpu"
# The user's own profile of that name wins over the site's.
sed 's/^default_partition: gpu$/default_partition: cpu/' site/mysite.yaml >"$HOME/.config/ddpctl/clusters/mysite.yaml"
run gen job.yaml --stdout
expect_code 0
expect_out "#SBATCH --partition=cpu"
# An unknown name lists where ddpctl looked, the site's folder among them.
sed -i 's/^cluster: mysite$/cluster: nosuch/' job.yaml
run gen job.yaml --stdout
expect_code 1
expect_err "searched"
expect_err "$T/site"
expect_err "/etc/ddpctl/clusters"
echo ok
