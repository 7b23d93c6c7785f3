"""The ddpctl client package (python/ddpctl, docs/python.md) against the real
ddpctl binary of this build ($DDPCTL) and a queue without a cluster
(tests/cli/fake_slurm): submit, status, events (plain, followed, async),
wait, reattach by id from another client, cancel, every error as an
exception with the envelope's file, line and field, a binary of other
document majors refused, and the same through on= a login host (a fake
ssh that runs the command in that host's own folder). Every document and
event the client read validates against the published schemas
(schemas/, python3-jsonschema).
"""
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time

import pytest

SOURCE = os.environ.get("DDPCTL_SOURCE") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "python"))
import ddpctl  # noqa: E402

BINARY = os.environ.get("DDPCTL") or os.path.join(SOURCE, "build", "src", "ddpctl")
SEP = "\x1f"


def _validator_module():
    spec = importlib.util.spec_from_file_location("validate", os.path.join(SOURCE, "tests", "json", "validate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VALIDATE = _validator_module()
STORE = VALIDATE.load_schemas(os.path.join(SOURCE, "schemas"))


def check_schema(doc):
    kind, major = doc["schema"][len("ddpctl."):].split("/")
    errors = list(VALIDATE.validator_for(STORE, f"ddpctl.{kind}.{major}.json").iter_errors(doc))
    assert not errors, f"{doc['schema']}: {[e.message for e in errors]}"


class World:
    """A folder with a fake queue on PATH and the spec `ddpctl init` writes."""

    def __init__(self, root):
        self.root = str(root)
        self.fake = os.path.join(self.root, "fake-slurm")
        os.makedirs(os.path.join(self.fake, "bin"))
        for c in ("sbatch", "squeue", "sacct", "scontrol", "sinfo", "sacctmgr", "scancel", "srun"):
            os.symlink(os.path.join(SOURCE, "tests", "cli", "fake_slurm"), os.path.join(self.fake, "bin", c))
        self.env = dict(os.environ, FAKE_SLURM=self.fake, PATH=os.path.join(self.fake, "bin") + ":" + os.environ["PATH"],
                        DDPCTL_CLUSTERS=os.path.join(SOURCE, "configs", "clusters"), HOME=self.root)
        self.env.pop("DDPCTL_RUNS", None)
        self.docs = []
        self.spec = os.path.join(self.root, "job.yaml")
        subprocess.run([BINARY, "init", "--cluster", "local", "--gpus", "0", "-o", self.spec], check=True,
                       env=self.env, cwd=self.root, capture_output=True)

    def client(self, **kw):
        kw.setdefault("runs", os.path.join(self.root, "runs"))
        return ddpctl.Client(binary=BINARY, env=self.env, on_document=self.docs.append, **kw)

    def set_state(self, job, state, fake=None):
        # Under the fake queue's lock, as its sbatch and scancel write.
        import fcntl
        with open(os.path.join(fake or self.fake, "lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = os.path.join(fake or self.fake, "jobs")
            lines = open(path).read().splitlines()
            with open(path + ".test", "w") as f:
                for line in lines:
                    fields = line.split(SEP)
                    if fields[0] == job:
                        fields[3] = state
                        # Slurm's start and end times (squeue's %S %e), as a real queue says them.
                        now = time.strftime("%Y-%m-%dT%H:%M:%S")
                        if state != "PENDING" and fields[6] == "N/A":
                            fields[6] = now
                        if state in ddpctl.ENDED and fields[7] == "N/A":
                            fields[7] = now
                    f.write(SEP.join(fields) + "\n")
            os.replace(path + ".test", path)


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = World(tmp_path)
    yield w
    for doc in w.docs:  # every document and event the client read
        check_schema(doc)


def test_submit_status_events_cancel_and_reattach(world):
    client = world.client()
    run = client.submit(world.spec, set={"trainer.epochs": 2}, no_preflight=True)
    assert run.id.startswith("job-")
    assert [j["outcome"] for j in run.jobs] == ["submitted"]
    job = run.jobs[0]["job"]
    rows = run.status()
    assert rows[0]["state"] == "PENDING" and rows[0]["job_id"] == job
    types = [e["type"] for e in run.events()]
    assert types == ["submitting", "submitted"]
    # A notebook whose kernel died: a new client gets the same run back.
    again = world.client().run(run.id)
    assert again.id == run.id and again.status()[0]["job_id"] == job
    assert run.cancel()["cancelled"][0]["job"] == job
    assert run.status()[0]["state"] == "CANCELLED"
    # The spec as a dict: written as the user's file would be.
    spec = {"name": "fromdict", "cluster": "local", "nodes": 1, "gpus_per_node": 0, "procs_per_node": 1,
            "time": "00:10:00", "command": ["true"]}
    other = client.submit(spec, no_preflight=True)
    assert other.id.startswith("fromdict-") and other.status()[0]["run"] == other.id


def test_follow_wait_and_async_events_until_the_run_ends(world):
    client = world.client()
    run = client.submit(world.spec, no_preflight=True)
    job = run.jobs[0]["job"]

    def ends():
        time.sleep(1.0)
        world.set_state(job, "RUNNING")
        time.sleep(1.0)
        world.set_state(job, "COMPLETED")

    t = threading.Thread(target=ends)
    t.start()
    rows = run.wait("ended", timeout=60)
    t.join()
    assert rows[0]["state"] == "COMPLETED"
    followed = [e["type"] for e in run.events(since="start")]
    assert followed[-2:] == ["ended", "run_ended"], followed
    # A cursor resumes after its line: nothing twice.
    first = next(iter(run.events()))
    rest = [e["seq"] for e in run.events(since=first["cursor"])]
    assert rest == list(range(2, len(followed) + 1))

    async def collect():
        return [e["type"] async for e in run.aevents(follow=True, timeout=30)]

    # The run ended: the follower says its state and ends.
    assert asyncio.run(collect()) == ["state"]


def test_wait_started_and_a_timeout(world):
    client = world.client()
    run = client.submit(world.spec, no_preflight=True)
    with pytest.raises(TimeoutError):
        run.wait("started", timeout=2)
    world.set_state(run.jobs[0]["job"], "RUNNING")
    assert run.wait("started", timeout=30)[0]["state"] == "RUNNING"


def test_errors_carry_the_envelope(world):
    client = world.client()
    with open("bad.yaml", "w") as f:
        f.write("name: bad\ncluster: local\nnodes: two\ngpus_per_node: 0\ncommand: ['true']\n")
    with pytest.raises(ddpctl.DdpctlError) as e:
        client.submit("bad.yaml", no_preflight=True)
    assert e.value.exit == 2 or e.value.exit == 1
    assert e.value.file and e.value.file.endswith("bad.yaml")
    assert e.value.line == 3
    assert e.value.field == "nodes"
    assert "nodes" in str(e.value)
    with pytest.raises(ddpctl.DdpctlError) as e:
        client.run("no-such-run")
    assert "no run with this name" in str(e.value)
    assert e.value.document["schema"] == "ddpctl.error/1"
    with pytest.raises(ddpctl.DdpctlError):
        list(client.submit(world.spec, no_preflight=True).events(since="c1.bogus"))
    with pytest.raises(ValueError):
        ddpctl.Run(client, "x").wait("done")


def test_a_binary_of_other_majors_is_refused_with_the_fix(world, tmp_path):
    fake = tmp_path / "old-ddpctl"
    doc = {"schema": "ddpctl.version/1", "version": "9.0.0", "documents": {"status": [2], "version": [1]}}
    fake.write_text("#!/bin/sh\necho '" + json.dumps(doc) + "'\n")
    fake.chmod(0o755)
    client = ddpctl.Client(binary=str(fake), env=world.env)
    with pytest.raises(ddpctl.IncompatibleBinary) as e:
        client.run("x")
    assert "status/1" in str(e.value) and "pip install ./python" in str(e.value)
    fake.write_text("#!/bin/sh\necho 'ddpctl 0.0.1'\n")
    with pytest.raises(ddpctl.IncompatibleBinary) as e:
        ddpctl.Client(binary=str(fake), env=world.env).version()
    assert "printed no JSON" in str(e.value)


FAKE_SSH = r"""#!/usr/bin/env bash
# ssh [-o OPT]... [-n] HOST [-- LINE]: LINE run here, in HOST's folder.
host= line=
while [ $# -gt 0 ]; do
  case $1 in
    -o|-F|-p|-l|-i) shift 2 ;;
    -O) exit 0 ;;
    -n|-tt|-t|-fN|-N|-f) shift ;;
    --) line=$2; break ;;
    -*) shift ;;
    *) if [ -z "$host" ]; then host=$1; shift; else break; fi ;;
  esac
done
world=$HOSTS/${host##*@}
mkdir -p "$world/home" "$world/slurm/bin"
for c in sbatch squeue sacct scontrol sinfo sacctmgr scancel srun; do
  [ -e "$world/slurm/bin/$c" ] || ln -s "$DDPCTL_SOURCE/tests/cli/fake_slurm" "$world/slurm/bin/$c"
done
[ -n "$line" ] || exit 0
cd "$world/home" || exit 255
export HOME=$world/home FAKE_SLURM=$world/slurm PATH=$world/slurm/bin:$HOSTS_BIN:$PATH
exec sh -c "$line"
"""


def test_the_same_through_on_a_login_host(world):
    bin_dir = os.path.join(world.root, "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "ssh"), "w") as f:
        f.write(FAKE_SSH)
    os.chmod(os.path.join(bin_dir, "ssh"), 0o755)
    os.symlink(BINARY, os.path.join(bin_dir, "ddpctl"))
    world.env.update(HOSTS=os.path.join(world.root, "hosts"), HOSTS_BIN=bin_dir, DDPCTL_SOURCE=SOURCE,
                     DDPCTL_SSH_COMMAND=os.path.join(bin_dir, "ssh"))
    os.makedirs(os.path.join(world.root, "hosts", "login1", "home", "proj"))
    client = world.client(on="u@login1", remote_dir="proj", runs=None)
    run = client.submit(world.spec, no_preflight=True)
    there = os.path.join(world.root, "hosts", "login1", "home", "proj", "runs", run.id)
    assert os.path.isdir(there), os.listdir(os.path.join(world.root, "hosts", "login1", "home", "proj"))
    assert not os.path.exists(os.path.join(world.root, "runs"))
    assert run.status()[0]["state"] == "PENDING"
    world.set_state(run.jobs[0]["job"], "COMPLETED", fake=os.path.join(world.root, "hosts", "login1", "slurm"))
    assert run.wait("ended", timeout=60)[0]["state"] == "COMPLETED"
    assert [e["type"] for e in run.events(types=["ended"])] == ["ended"]
    assert world.client(on="u@login1", remote_dir="proj", runs=None).run(run.id).id == run.id


def test_installs_offline_with_debians_setuptools(tmp_path):
    # pip install --no-build-isolation ./python, as docs/python.md says, from
    # a copy (setuptools builds in the tree it is given).
    import shutil
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SOURCE, "python"), src, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    site = tmp_path / "site"
    proc = subprocess.run(["/usr/bin/python3", "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                           "--target", str(site), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = subprocess.run(["/usr/bin/python3", "-c", "import ddpctl; print(ddpctl.__file__, ddpctl.__version__, ddpctl.Client)"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(site)), cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(str(site)) and " 0.1.0 " in out.stdout, out.stdout
