#!/usr/bin/env python3
# How sbatch's long options in src/slurm/sbatch_options.cpp were found: sbatch
# itself is asked, for every prefix of every name, how its getopt_long reads
# it (`sbatch --PREFIX=x --help`: "unrecognized option", "is ambiguous;
# possibilities: ...", or taken). Every name it takes shows up as a leaf of
# that walk or in an ambiguity's possibilities; aliases show in the option
# named by the value's error ("Invalid numeric value "x" for --ntasks-per-node"
# for --tasks-per-node). Nothing is submitted: --help ends each call, and a
# stub slurm.conf (ClusterName, SlurmctldHost) is all sbatch needs for that.
#
#   tests/unit/data/capture-sbatch-options.py [CHROOT]   (about 25,000 calls, 1-2 minutes)
#
# CHROOT: a Slurm chroot (/var/cache/ddpctl/slurm-24.11-root) to ask its
# sbatch instead of the host's; the stub config goes into its /tmp too.
import os
import string
import subprocess
import sys
import tempfile

root = sys.argv[1] if len(sys.argv) > 1 else ""
conf_dir = tempfile.mkdtemp(prefix="ddpctl-sbatch-options.")
conf = os.path.join(conf_dir, "slurm.conf")
for base in {"", root}:
    os.makedirs(base + conf_dir, exist_ok=True)
    with open(base + conf, "w") as f:
        f.write("ClusterName=x\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n")
env = dict(os.environ, SLURM_CONF=conf)


def verdict(prefix):
    argv = ["sbatch", f"--{prefix}=x", "--help"]
    if root:
        argv = ["chroot", root] + argv
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=30)
    out = r.stderr + r.stdout
    first = out.splitlines()[0] if out else ""
    if "unrecognized option" in out:
        return "none", []
    if "is ambiguous" in out:
        return "ambiguous", [w.strip("'")[2:] for w in first.split("possibilities:")[1].split()]
    return "taken", [first]


names, aliases = set(), {}


def walk(prefix):
    kind, detail = verdict(prefix)
    if kind == "none":
        return False
    if kind == "ambiguous":
        names.update(detail)
    longer = False
    for c in string.ascii_lowercase + string.digits + "-":
        longer = walk(prefix + c) or longer
    if not longer:
        names.add(prefix)
        for word in detail[0].replace(".", " ").split() if kind == "taken" else []:
            if word.startswith("--") and word[2:] != prefix and word[2:] in names | {prefix}:
                aliases[prefix] = word[2:]
    return True


for letter in string.ascii_lowercase:
    walk(letter)
print("\n".join(sorted(names)))
for alias, option in sorted(aliases.items()):
    print(f"# {alias}: an error names --{option}", file=sys.stderr)
