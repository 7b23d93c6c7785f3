#!/usr/bin/python3
"""ddpctl's own speed and memory, each against a named baseline in this run:

1. `ddpctl status --all` of 20 recorded runs whose jobs sit in a generated
   10,000-job `squeue --json` document (the real 22.05 shape, from
   tests/unit/data/22.05/squeue.json): a busy cluster's whole queue, vs `python3 -c 'json.load(...)'` of the
   same document (the least any squeue wrapper must do);
2. `ddpctl gen` of every example spec under configs/, vs an empty process
   (`/bin/true`: the floor of any command).

A fake `squeue` first on PATH prints the document (a bench fixture: no Slurm
is needed). Wall time is the best of --repeat runs; peak memory is the
child's maximum resident set size. Usage: bench/cli_perf.py [--jobs N] [--repeat R]
"""
import argparse
import copy
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ddpctl = os.environ.get("DDPCTL", os.path.join(root, "build", "src", "ddpctl"))


def run(argv, env=None, repeat=3):
    """Best wall time (s) and peak RSS (MiB) of argv over `repeat` runs."""
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        # GNU time measures the command alone (a fork of this Python would
        # count Python's own memory before the exec).
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "ddpctl-bench-maxrss %M"] + argv, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        if p.returncode != 0:
            sys.exit(f"bench: {' '.join(argv)} failed: {p.stderr}")
        if run.check and run.check not in p.stdout:
            sys.exit(f"bench: {' '.join(argv)} did not print {run.check!r}: {p.stdout[-500:]}")
        best = min(best, wall)
        kib = [int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("ddpctl-bench-maxrss ")]
        peak = max(peak, kib[-1] / 1024)
    return best, peak


run.check = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not os.access(ddpctl, os.X_OK):
        sys.exit(f"bench: {ddpctl} not built (scripts/build)")
    work = tempfile.mkdtemp(prefix="ddpctl-bench-")
    doc = json.load(open(os.path.join(root, "tests/unit/data/22.05/squeue.json")))
    template = doc["jobs"][0]
    doc["jobs"] = []
    for i in range(a.jobs):
        j = copy.deepcopy(template)
        j["job_id"] = 100000 + i
        j["name"] = f"bench-{i % 50}"
        j["comment"] = f"ddpctl:{i:012x}"
        doc["jobs"].append(j)
    squeue_json = os.path.join(work, "squeue.json")
    json.dump(doc, open(squeue_json, "w"), indent=2)
    fakebin = os.path.join(work, "bin")
    os.mkdir(fakebin)
    with open(os.path.join(fakebin, "squeue"), "w") as f:
        f.write(f"#!/bin/sh\nexec cat {squeue_json}\n")
    os.chmod(os.path.join(fakebin, "squeue"), 0o755)
    # 20 recorded runs, one job each, spread through a queue of other jobs:
    # the common case of a user's handful of runs on a busy cluster.
    runs = os.path.join(work, "runs")
    mine = [100000 + i * (a.jobs - 1) // 19 for i in range(20)]
    for k, job in enumerate(mine):
        rdir = os.path.join(runs, f"bench-20261122T0000{k:02}Z-000000")
        os.makedirs(rdir)
        json.dump({"format": 1, "name": "bench", "cluster": "local", "created_at": f"2026-11-22T00:00:{k:02}Z",
                   "cwd": work, "output_dir": work,
                   "shapes": [{"label": "1x1", "job_name": "bench", "script": "bench.sbatch", "nodes": 1,
                               "gpus_per_node": 0, "ranks_per_node": 1, "output_dir": work}]},
                  open(os.path.join(rdir, "run.json"), "w"))
        json.dump({"format": 1, "run": "bench", "attempts": [
            {"token": f"{job:012x}", "shape": "1x1", "script": "bench.sbatch", "outcome": "submitted",
             "job_id": str(job)}]}, open(os.path.join(rdir, "ledger.json"), "w"))
    env = dict(os.environ, PATH=fakebin + ":" + os.environ["PATH"], DDPCTL_RUNS=runs, NO_COLOR="1")

    mib = os.path.getsize(squeue_json) / 2**20
    print(f"ddpctl CLI benchmarks, best of {a.repeat}; machine: {os.cpu_count()} cores")
    run.check = f"  {mine[-1]}  "  # the last run's job row: found in the queue
    status = run([ddpctl, "status", "--all"], env, a.repeat)
    run.check = None
    base = run(["/usr/bin/python3", "-c", f"import json; json.load(open('{squeue_json}'))"], env, a.repeat)
    print(f"status of 20 runs in a queue of {a.jobs} jobs ({mib:.1f} MiB squeue --json):")
    print(f"  ddpctl status --all              {status[0]*1000:8.1f} ms  {status[1]:7.1f} MiB")
    print(f"  python3 json.load (baseline)     {base[0]*1000:8.1f} ms  {base[1]:7.1f} MiB")
    print(f"  ratio: ddpctl status takes {status[0]/base[0]:.2f}x the time and {status[1]/base[1]:.2f}x the memory"
          " of the bare parse")

    specs = sorted(glob.glob(os.path.join(root, "configs", "**", "*.yaml"), recursive=True))
    specs = [s for s in specs if "/clusters/" not in s]
    total, peak = 0.0, 0.0
    for s in specs:
        w, m = run([ddpctl, "gen", s, "-o", os.path.join(work, "gen")], None, a.repeat)
        total += w
        peak = max(peak, m)
    floor = run(["/bin/true"], None, a.repeat)
    print(f"gen of {len(specs)} example specs:")
    print(f"  ddpctl gen, total                {total*1000:8.1f} ms  {peak:7.1f} MiB peak")
    print(f"  ddpctl gen, per spec             {total/len(specs)*1000:8.1f} ms")
    print(f"  /bin/true (baseline), per call   {floor[0]*1000:8.1f} ms  {floor[1]:7.1f} MiB")
    print(f"  ratio: {total/len(specs)/floor[0]:.1f}x an empty process per spec")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
