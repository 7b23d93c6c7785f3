"""ddpctl tune (python/ddpctl/tune.py, docs/tune.md) with Debian's Optuna
against this ddpctl and the fake queue (tests/cli/fake_slurm), a thread
playing the cluster: it starts each pending job, writes its metrics file
and the metric events into its run's log as the job's sampler would (under
the log's lock, the next seq), and ends it. Checked: K trials in flight and the next asked as
one ends; a trial whose value is far worse than the median is pruned at
the study's process and its run cancelled; a failed job is FAIL with
status's reason; the study process killed mid-study and started again goes
on with no trial lost or run twice; bad spaces, an unknown field, a
storage that cannot be opened and a study of another spec are refused
before anything is submitted.
"""
import fcntl
import glob
import json
import os
import threading
import time

import pytest

from test_client import SEP, World, world  # noqa: F401 - the fixture

optuna = pytest.importorskip("optuna")
from ddpctl import tune as T  # noqa: E402


def append_event(run_dir, event):
    with open(os.path.join(run_dir, "events.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = os.path.join(run_dir, "events.ndjson")
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        seq = json.loads(lines[-1])["seq"] + 1 if lines else 1
        event = dict(event, schema="ddpctl.event/1", seq=seq, t=time.time(), time="2026-12-07T00:00:00.000Z",
                     run=os.path.basename(run_dir))
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")


class Cluster(threading.Thread):
    """Starts each pending job, says its metrics, ends it as `fate` says:
    fate(job number, 0-based) -> (values per epoch, final state)."""

    def __init__(self, w, fate, events=True):
        super().__init__(daemon=True)
        self.w, self.fate, self.stop, self.seen, self.events = w, fate, False, [], events
        self.max_running = 0

    def run_dir_of(self, job):
        for ledger in glob.glob(os.path.join(self.w.root, "runs", "*", "ledger.json")):
            if any(a.get("job_id") == job for a in json.load(open(ledger))["attempts"]):
                return os.path.dirname(ledger)
        return None

    def run(self):
        while not self.stop:
            path = os.path.join(self.w.fake, "jobs")
            jobs = [l.split(SEP) for l in open(path).read().splitlines()] if os.path.exists(path) else []
            self.max_running = max(self.max_running, sum(1 for j in jobs if j[3] in ("PENDING", "RUNNING")))
            for j in jobs:
                if j[3] == "PENDING" and j[0] not in self.seen:
                    d = self.run_dir_of(j[0])
                    if not d:
                        continue
                    n = len(self.seen)
                    self.seen.append(j[0])
                    values, end = self.fate(n)
                    self.w.set_state(j[0], "RUNNING")
                    for epoch, v in enumerate(values):
                        line = {"epoch": epoch, "val_loss": v}
                        # The job's metrics file, and its sampler's event of each line
                        # (without: the sampler was too late).
                        with open(os.path.join(self.w.root, "logs", f"{j[1]}_{j[0]}.metrics.jsonl"), "a") as f:
                            f.write(json.dumps(line) + "\n")
                        if self.events:
                            append_event(d, {"type": "metric", "job": j[0], "metrics": line})
                    if end:
                        self.w.set_state(j[0], end)
            time.sleep(0.1)


def space():
    return {"trainer.lr": {"log_uniform": [1e-4, 1e-1]}, "trainer.epochs": {"int": [1, 3]}}


def study_of(w):
    return f"sqlite:///{w.root}/study.db"


def test_trials_in_flight_pruned_failed_and_told(world):
    client = world.client()
    # Jobs 0-1 set the median; 2 is far worse and never ends by itself
    # (pruned, cancelled); 3 fails; 4-5 complete.
    fates = {0: ([0.5, 0.4], "COMPLETED"), 1: ([0.6, 0.5], "COMPLETED"), 2: ([9.0], None), 3: ([0.3], "FAILED")}
    cluster = Cluster(world, lambda n: fates.get(n, ([0.45, 0.3], "COMPLETED")))
    cluster.start()
    said = []
    try:
        study = T.tune(client, world.spec, space(), "val_loss", trials=6, parallel=2, storage=study_of(world),
                       poll_s=0.2, submit_options={"no_preflight": True}, log=said.append)
    finally:
        cluster.stop = True
    states = [t.state.name for t in study.trials]
    assert len(study.trials) == 6 and states.count("PRUNED") == 1 and states.count("FAIL") == 1, (states, "\n".join(said))
    assert states.count("COMPLETE") == 4
    assert cluster.max_running <= 2, cluster.max_running
    pruned = next(t for t in study.trials if t.state.name == "PRUNED")
    run = pruned.user_attrs["ddpctl_run"]
    assert client.run(run).status()[0]["state"] == "CANCELLED"
    failed = next(t for t in study.trials if t.state.name == "FAIL")
    assert "FAILED" in failed.user_attrs["ddpctl_failure"], failed.user_attrs
    best = study.best_trial
    assert best.value == 0.3 and best.user_attrs["ddpctl_run"].startswith(f"job-t{best.number}-")
    assert best.user_attrs["ddpctl_jobs"] and best.user_attrs["ddpctl_shapes"] == ["1x1"]
    # Each trial's run carries its parameters.
    spec = open(glob.glob(os.path.join(world.root, "runs", best.user_attrs["ddpctl_run"], "spec.yaml"))[0]).read()
    assert "epochs" in spec
    # What each trial used and ran, from its run's report, in its attributes.
    for t in study.trials:
        assert isinstance(t.user_attrs.get("ddpctl_node_hours"), float), (t.number, t.user_attrs)
        assert t.user_attrs.get("ddpctl_code") and t.user_attrs.get("ddpctl_job"), (t.number, t.user_attrs)
    # `ddpctl report STUDY`: the trials by parameter, each its run's job and state.
    doc = client.call("report", "job", "--best", "val_loss:min")
    cells = doc["study"]["cells"]
    assert [c["task"] for c in cells] == [t.user_attrs["ddpctl_job"] for t in study.trials], cells
    assert [k["name"] for k in doc["study"]["keys"]] == ["lr", "epochs"], doc["study"]
    by_job = {c["task"]: c for c in cells}
    for t in study.trials:
        c = by_job[t.user_attrs["ddpctl_job"]]
        assert float(c["values"]["lr"]) == pytest.approx(t.params["trainer.lr"], rel=1e-6), (c, t.params)
        assert int(c["values"]["epochs"]) == t.params["trainer.epochs"], (c, t.params)
    assert [c["task"] for c in cells if c["best"]] == [best.user_attrs["ddpctl_job"]], cells
    assert doc["study"]["summary"].startswith("6 trials: "), doc["study"]["summary"]
    import subprocess
    from test_client import BINARY
    table = subprocess.run([BINARY, "report", "job", "--runs", os.path.join(world.root, "runs")], env=world.env,
                           capture_output=True, text=True)
    assert table.returncode == 0 and table.stdout.startswith("study job-"), (table.stdout, table.stderr)
    assert by_job[best.user_attrs["ddpctl_job"]]["metrics"]["val_loss"] == 0.3
    assert by_job[pruned.user_attrs["ddpctl_job"]]["state"] == "CANCELLED"
    assert by_job[failed.user_attrs["ddpctl_job"]]["state"] == "FAILED"


def test_the_study_process_killed_and_started_again_loses_and_repeats_nothing(world):
    client = world.client()
    cluster = Cluster(world, lambda n: ([0.5 - n / 100], "COMPLETED" if n >= 2 else None))
    cluster.start()

    class Killed(Exception):
        pass

    def dies(line):
        if line.startswith("trial 1: run"):
            raise Killed()

    try:
        with pytest.raises(Killed):
            T.tune(client, world.spec, space(), "val_loss", trials=4, parallel=2, storage=study_of(world), poll_s=0.2,
                   submit_options={"no_preflight": True}, log=dies)
        # Jobs 0 and 1 run on while the study's process is gone; then end.
        deadline = time.time() + 30
        while len(cluster.seen) < 2:
            assert time.time() < deadline, f"the cluster started {cluster.seen} of the 2 jobs"
            time.sleep(0.05)
        for job in list(cluster.seen):
            world.set_state(job, "COMPLETED")
        said = []
        study = T.tune(client, world.spec, space(), "val_loss", trials=4, parallel=2, storage=study_of(world),
                       poll_s=0.2, submit_options={"no_preflight": True}, log=said.append)
    finally:
        cluster.stop = True
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 4, said
    assert any("back to its run" in s for s in said), said
    runs = sorted(os.listdir(os.path.join(world.root, "runs")))
    assert len([r for r in runs if os.path.exists(os.path.join(world.root, "runs", r, "ledger.json"))]) == 4, runs
    # The study's record lists each trial's run once.
    assert [c["index"] for c in client.call("report", "job")["study"]["cells"]] == [0, 1, 2, 3]


def test_bad_input_is_refused_before_anything_is_submitted(world, tmp_path):
    client = world.client()
    cases = [
        ({"trainer.lr": {"log_uniform": [0, 1]}}, "goes through 0"),
        ({"trainer.lr": {"uniform": [1, 1]}}, "an empty range"),
        ({"trainer.lr": {"normal": [0, 1]}}, "one of log_uniform"),
        ({"trainer.model": {"choice": []}}, "a non-empty list"),
        ({"trainer.nope": {"uniform": [0, 1]}}, "unknown field 'nope'"),
    ]
    for bad, words in cases:
        with pytest.raises(T.TuneError) as e:
            T.tune(client, world.spec, bad, "val_loss", storage=study_of(world), submit_options={"no_preflight": True})
        assert words in str(e.value), str(e.value)
    with pytest.raises(T.TuneError) as e:
        T.tune(client, world.spec, space(), "val_loss", storage="sqlite:////no/such/dir/x.db",
               submit_options={"no_preflight": True})
    assert "cannot be opened" in str(e.value)
    other = tmp_path / "other.yaml"
    other.write_text(open(world.spec).read())
    optuna.create_study(study_name="job", storage=study_of(world)).set_user_attr(
        "ddpctl", {"spec": str(other), "space": {}, "metric": "x"})
    with pytest.raises(T.TuneError) as e:
        T.tune(client, world.spec, space(), "val_loss", storage=study_of(world), submit_options={"no_preflight": True})
    assert "another spec" in str(e.value)
    assert not os.path.exists(os.path.join(world.root, "fake-slurm", "jobs")), "something was submitted"


def test_the_command_reads_a_yaml_space_and_runs_the_study(world):
    import subprocess
    from test_client import BINARY
    spaces = {
        "bad.yaml": ("trainer.lr: {log_uniform: [0, 0.1]}\n", "goes through 0"),
        "broken.yaml": ("trainer.lr: {log_uniform: [1e-4, 0.1]\n", "broken.yaml:2:1: YAML syntax error"),
    }
    for name, (text, words) in spaces.items():
        with open(name, "w") as f:
            f.write(text)
        p = subprocess.run([BINARY, "tune", world.spec, "--space", name, "--metric", "val_loss"], env=world.env,
                           capture_output=True, text=True)
        assert p.returncode == 1 and words in p.stderr, (p.returncode, p.stderr)
    with open("space.yaml", "w") as f:
        f.write("trainer.lr: {log_uniform: [1e-4, 1e-1]}\ntrainer.model: {choice: [resnet18, smallcnn]}\n")
    cluster = Cluster(world, lambda n: ([0.5 - n / 10], "COMPLETED"))
    cluster.start()
    try:
        p = subprocess.run([BINARY, "tune", world.spec, "--space", "space.yaml", "--metric", "val_loss", "--trials", "3",
                            "--parallel", "2", "--storage", study_of(world), "--poll", "0.2", "--no-preflight"],
                           env=dict(world.env, DDPCTL_RUNS=os.path.join(world.root, "runs")), capture_output=True,
                           text=True, timeout=120)
    finally:
        cluster.stop = True
    assert p.returncode == 0, p.stdout + p.stderr
    assert "tune: best trial 2: val_loss 0.3 (" in p.stdout, p.stdout
    study = optuna.load_study(study_name="job", storage=study_of(world))
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 3
    assert {t.params["trainer.model"] for t in study.trials} <= {"resnet18", "smallcnn"}


def test_a_metric_only_in_the_jobs_file_is_read_from_the_report(world):
    # On a cluster the sampler can be killed with the step before it says
    # the last lines: the value comes from the report, after a grace.
    client = world.client()
    os.makedirs(os.path.join(world.root, "logs"), exist_ok=True)
    cluster = Cluster(world, lambda n: ([0.2 + n / 10], "COMPLETED"), events=False)
    cluster.start()
    try:
        study = T.tune(client, world.spec, space(), "val_loss", trials=2, parallel=2, storage=study_of(world),
                       poll_s=0.2, submit_options={"no_preflight": True}, log=lambda s: None, metric_grace_s=0.5)
    finally:
        cluster.stop = True
    assert sorted(t.value for t in study.trials) == pytest.approx([0.2, 0.3])


def test_a_study_name_that_cannot_name_a_file_is_refused(world):
    client = world.client()
    # The default, the spec's file name, is made one.
    import shutil
    spaced = os.path.join(world.root, "train v2.yaml")
    shutil.copy(world.spec, spaced)
    cluster = Cluster(world, lambda n: ([0.5], "COMPLETED"))
    cluster.start()
    try:
        study = T.tune(client, spaced, space(), "val_loss", trials=1, parallel=1, storage=study_of(world), poll_s=0.2,
                       submit_options={"no_preflight": True}, log=lambda s: None, metric_grace_s=0)
    finally:
        cluster.stop = True
    assert study.study_name == "train-v2" and study.trials[0].state.name == "COMPLETE", study.trials
    assert client.call("report", "train-v2")["study"]["cells"][0]["state"] == "COMPLETED"
    with pytest.raises(T.TuneError) as e:
        T.tune(client, world.spec, space(), "val_loss", study_name="../x", submit_options={"no_preflight": True})
    assert "a study's name" in str(e.value)
    with pytest.raises(ddpctl_error()) as e:
        client.submit(world.spec, study="a/b", trial=0, no_preflight=True)
    assert e.value.file == "--study" and "a study's name" in str(e.value), (e.value.file, str(e.value))
    with pytest.raises(ddpctl_error()) as e:
        client.submit(world.spec, study="s", trial="x", no_preflight=True)
    assert e.value.file == "--trial", e.value.file
    assert len(open(os.path.join(world.root, "fake-slurm", "jobs")).read().splitlines()) == 1, "the bad ones submitted"


def ddpctl_error():
    from ddpctl import DdpctlError
    return DdpctlError


def test_each_trial_has_its_own_checkpoint_folder(world):
    # A spec whose trainer checkpoints: each trial resumes from its own
    # folder in it (a requeue, a preemption), never from another trial's.
    client = world.client()
    with open(world.spec) as f:
        text = f.read().replace("  epochs: 1", '  epochs: 1\n  checkpoint_dir: "ck dir/"\n  resume: true')
    with open(world.spec, "w") as f:
        f.write(text)
    runs = [client.submit(world.spec, set={"name": f"job-t{n}", "trainer.lr": 0.1 * (n + 1)}, study="job", trial=n,
                          no_preflight=True) for n in (0, 1)]
    for n, run in enumerate(runs):
        script = glob.glob(os.path.join(world.root, "runs", run.id, "*.sbatch"))[0]
        text = open(script).read()
        assert f"'--checkpoint-dir=ck dir/job-t{n}'" in text, [l for l in text.splitlines() if "checkpoint" in l]
    study = client.call("report", "job")["study"]
    assert [k["name"] for k in study["keys"]] == ["lr"], study["keys"]
    # The run's result names its checkpoint folder, and whether it holds one.
    world.set_state(runs[1].jobs[0]["job"], "RUNNING")
    world.set_state(runs[1].jobs[0]["job"], "COMPLETED")
    os.makedirs(os.path.join(world.root, "ck dir", "job-t1"))
    open(os.path.join(world.root, "ck dir", "job-t1", "checkpoint.pt"), "w").close()
    row = runs[1].result()["rows"][0]
    assert row["checkpoint"] == {"folder": os.path.join(world.root, "ck dir", "job-t1"), "saved": True}, row
