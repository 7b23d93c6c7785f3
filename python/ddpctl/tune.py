"""ddpctl tune: an Optuna study whose trials are ddpctl runs (docs/tune.md).

Only this process talks to the study's storage; no compute node opens it.
K trials are in flight at all times: a trial that ends is told to the study
and the next is asked at once (no batch barrier). Intermediate values come
from each run's metric events; the pruner decides here, and a pruned
trial's run is cancelled at once. A preempted or requeued job goes on as
the same trial. Each trial's run is named before it is submitted (its
user attribute ``ddpctl_name``, in the storage), so a study process killed
and started again finds every trial's run: none is lost or run twice.

    python3 -m ddpctl.tune job.yaml --space space.json --metric val_loss \\
        --trials 12 --parallel 4 --storage sqlite:///study.db
"""
import argparse
import json
import math
import os
import re
import sys
import time

from .client import ENDED, Client
from .errors import DdpctlError

KINDS = ("log_uniform", "uniform", "int", "choice")


class TuneError(ValueError):
    """The study cannot start: what is wrong, before anything is submitted."""


def check_space(space, where="the search space"):
    """The space's form: {path: {kind: range}}; a TuneError naming the path."""
    if not isinstance(space, dict) or not space:
        raise TuneError(f"{where}: a mapping of spec fields to ranges, e.g. "
                        '{"trainer.lr": {"log_uniform": [1e-4, 1e-1]}}')
    for path, d in space.items():
        if not isinstance(d, dict) or len(d) != 1 or next(iter(d)) not in KINDS:
            raise TuneError(f"{where}: {path}: one of {', '.join(KINDS)} with its range")
        kind, v = next(iter(d.items()))
        if kind == "choice":
            if not isinstance(v, list) or not v:
                raise TuneError(f"{where}: {path}: choice: a non-empty list of values")
            continue
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                            for x in v)):
            raise TuneError(f"{where}: {path}: {kind}: [low, high], two numbers")
        lo, hi = v
        if not lo < hi:
            raise TuneError(f"{where}: {path}: {kind}: an empty range [{lo}, {hi}] (low must be below high)")
        if kind == "log_uniform" and lo <= 0:
            raise TuneError(f"{where}: {path}: log_uniform: [{lo}, {hi}] goes through 0; a log range is above it")
        if kind == "int" and not (float(lo).is_integer() and float(hi).is_integer()):
            raise TuneError(f"{where}: {path}: int: whole numbers")


def suggest(trial, space):
    params = {}
    for path, d in space.items():
        kind, v = next(iter(d.items()))
        if kind == "log_uniform":
            params[path] = trial.suggest_float(path, v[0], v[1], log=True)
        elif kind == "uniform":
            params[path] = trial.suggest_float(path, v[0], v[1])
        elif kind == "int":
            params[path] = trial.suggest_int(path, int(v[0]), int(v[1]))
        else:
            params[path] = trial.suggest_categorical(path, v)
    return params


def check_paths(client, spec, space, submit_options=None):
    """Each field path is one the spec has: a dry run of the submission
    (`ddpctl submit --dry-run --set`, where the trials will be submitted,
    with a value of each range) refuses an unknown one, naming it."""
    sets = {path: next(iter(d.values()))[0] for path, d in space.items()}
    options = dict(submit_options or {}, dry_run=True)
    words, _ = client._spec_words("submit", spec, sets, options)
    try:
        client.call(*words)
    except DdpctlError as e:
        raise TuneError(f"the search space does not fit {spec}: {e}") from e


class Trials:
    """The study's trials in flight, each a ddpctl run."""

    def __init__(self, client, spec, space, metric, study, optuna, log, submit_options):
        self.client, self.spec, self.space, self.metric = client, spec, space, metric
        self.study, self.optuna, self.log = study, optuna, log
        self.submit_options = submit_options or {}
        self.flying = {}  # trial number -> {"trial", "run", "cursor", "steps"}

    metric_grace_s = 30.0

    def result_rows(self, run):
        """The report's rows of the trial's run; [] when it has none to give."""
        try:
            return run.result().get("rows") or []
        except DdpctlError:
            return []

    def record_usage(self, trial, rows):
        """What the trial's run used, from its report, in the trial's
        attributes (before it is told: a finished trial is not written to):
        GPU-hours (node-hours on CPUs), the code it ran, its job and shape."""
        for key in ("gpu_hours", "node_hours"):
            values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
            if values:
                trial.set_user_attr(f"ddpctl_{key}", sum(values))
        codes = sorted({r["code"] for r in rows if r.get("code")})
        if codes:
            trial.set_user_attr("ddpctl_code", codes[0] if len(codes) == 1 else codes)
        for key, attr in (("job", "ddpctl_job"), ("shape", "ddpctl_shape")):
            if rows and rows[-1].get(key):
                trial.set_user_attr(attr, rows[-1][key])

    def reported_value(self, rows):
        try:
            for row in rows:
                v = row.get(self.metric)
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                    return float(v)
        except (AttributeError, TypeError):
            pass
        return None

    def name_of(self, number):
        return f"{self.study.study_name}-t{number}"

    def start(self, trial, params):
        # The trial's run is named in the storage before it is submitted.
        name = self.name_of(trial.number)
        trial.set_user_attr("ddpctl_name", name)
        sets = dict(params, name=name)
        # --study: the run is the study's trial in the runs folder too (`ddpctl report STUDY`).
        run = self.client.submit(self.spec, set=sets, study=self.study.study_name, trial=trial.number,
                                 **self.submit_options)
        self.attach(trial, run)
        self.log(f"trial {trial.number}: run {run.id} ({', '.join(f'{k}={v}' for k, v in params.items())})")

    def attach(self, trial, run):
        trial.set_user_attr("ddpctl_run", run.id)
        if run.jobs:
            trial.set_user_attr("ddpctl_jobs", [j.get("job") for j in run.jobs])
            trial.set_user_attr("ddpctl_shapes", [j.get("shape") for j in run.jobs])
        self.flying[trial.number] = {"trial": trial, "run": run, "cursor": None, "steps": set(), "value": None}

    def resume(self):
        """The study's RUNNING trials (a study process started again): each
        back to its run, or submitted now when its run was never made."""
        states = (self.optuna.trial.TrialState.RUNNING,)
        for frozen in self.study.get_trials(deepcopy=False, states=states):
            trial = self.optuna.trial.Trial(self.study, frozen._trial_id)
            name = frozen.user_attrs.get("ddpctl_name") or self.name_of(frozen.number)
            try:
                run = self.client.run(name)
            except DdpctlError:
                run = None
            if run is None:
                self.start(trial, {p: frozen.params[p] for p in self.space if p in frozen.params})
            else:
                self.attach(trial, run)
                self.log(f"trial {frozen.number}: back to its run {run.id}")

    def step(self, number):
        """Reads the trial's new metric events and its jobs' states; tells the
        study when it ended or is pruned. True when the trial is over."""
        f = self.flying[number]
        trial, run = f["trial"], f["run"]
        # The jobs' states first: a job's metrics are written before its end,
        # so the events read after hold every one of an ended job's.
        rows = [r for r in run.status() if r.get("job_id")]
        for event in run.events(since=f["cursor"] or "start", types=["metric"]):
            f["cursor"] = event.get("cursor") or f["cursor"]
            metrics = event.get("metrics") or {}
            value = metrics.get(self.metric)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                continue
            f["value"] = float(value)
            step = metrics.get("epoch", len(f["steps"]))
            if not isinstance(step, int) or step in f["steps"]:
                step = max(f["steps"], default=-1) + 1
            f["steps"].add(step)
            trial.report(float(value), step)
        # Asked at every look, not only at a new value: trials that ended
        # since may make the pruner's median.
        if f["steps"] and not (rows and all(r.get("state") in ENDED for r in rows)) and trial.should_prune():
            # Slurm's cancel is the job's graceful stop: SIGTERM to its steps
            # (the bundled trainer and the recipe of docs/running.md checkpoint
            # at the next step and exit), SIGKILL after the site's KillWait;
            # `ddpctl cancel` returns once Slurm says the job ended.
            self.log(f"trial {number}: pruned at step {max(f['steps'])} ({self.metric} {f['value']}); "
                     f"stopping run {run.id}")
            run.cancel()
            self.record_usage(trial, self.result_rows(run))
            self.study.tell(trial, state=self.optuna.trial.TrialState.PRUNED)
            self.log(f"trial {number}: run {run.id} stopped; its nodes are free")
            return True
        if not rows or not all(r.get("state") in ENDED for r in rows):
            return False  # running, pending, or requeued (the same trial goes on)
        if f["value"] is None and any(r.get("state") == "COMPLETED" for r in rows):
            # The job's sampler may say its last metric lines just after
            # Slurm says the job ended: looked for a while, then in the
            # report (which reads the metrics file itself).
            f.setdefault("ended_at", time.monotonic())
            if time.monotonic() - f["ended_at"] < self.metric_grace_s:
                return False
        report = self.result_rows(run)
        self.record_usage(trial, report)
        if f["value"] is None:
            f["value"] = self.reported_value(report)
        if any(r.get("state") == "COMPLETED" for r in rows) and f["value"] is not None:
            self.study.tell(trial, f["value"])
            self.log(f"trial {number}: {self.metric} {f['value']} (run {run.id})")
        else:
            why = "; ".join(f"job {r.get('job_id')} {r.get('state')}: {r.get('reason_text') or r.get('reason', '')}"
                            for r in rows)
            if f["value"] is None and any(r.get("state") == "COMPLETED" for r in rows):
                why = f"it completed without a {self.metric} metric"
            trial.set_user_attr("ddpctl_failure", why)
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            self.log(f"trial {number}: failed: {why}")
        return True


def tune(client, spec, space, metric, direction="minimize", trials=12, parallel=4, storage=None, study_name=None,
         pruner="median", poll_s=5.0, submit_options=None, log=print, metric_grace_s=30.0):
    """Runs the study until it has `trials` finished trials; the study."""
    check_space(space)
    try:
        import optuna  # Debian's python3-optuna; only the study's process needs it
    except ImportError as e:
        raise TuneError(f"the study needs Optuna, which {sys.executable} cannot import ({e}): "
                        "apt install python3-optuna") from e
    if metric is None or not str(metric):
        raise TuneError("--metric: the name of the metric the trials report (a key of the metric lines)")
    if trials < 1 or parallel < 1:
        raise TuneError("--trials and --parallel: 1 or more")
    check_paths(client, spec, space, submit_options)
    # By default the spec's file name, made a name files can carry ("train v2.yaml": "train-v2").
    name = study_name or (re.sub(r"[^A-Za-z0-9._-]", "-", os.path.splitext(os.path.basename(os.fspath(spec)))[0])
                          .lstrip("._-") or "study")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
        raise TuneError(f"--study {name!r}: a study's name is letters, digits, '.', '_' and '-' (it names the "
                        "trials' runs and the study's record in the runs folder)")
    pruners = {"median": optuna.pruners.MedianPruner(n_startup_trials=2), "none": optuna.pruners.NopPruner()}
    if pruner not in pruners:
        raise TuneError(f"--pruner: median or none, not {pruner}")
    try:
        study = optuna.create_study(study_name=name, storage=storage, direction=direction,
                                    pruner=pruners[pruner], load_if_exists=True)
    except Exception as e:  # noqa: BLE001 - optuna and SQLAlchemy raise many kinds
        raise TuneError(f"--storage {storage}: the study cannot be opened: {e}") from e
    what = {"spec": os.path.abspath(os.fspath(spec)), "space": space, "metric": metric}
    known = study.user_attrs.get("ddpctl")
    if known is None:
        study.set_user_attr("ddpctl", what)
    elif known != what:
        raise TuneError(f"study {name} in {storage} is of another spec or space ({known.get('spec')}, "
                        f"{sorted(known.get('space', {}))}): name another --study")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t = Trials(client, spec, space, metric, study, optuna, log, submit_options)
    t.metric_grace_s = metric_grace_s
    t.resume()
    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL)
    while True:
        done = len(study.get_trials(deepcopy=False, states=finished))
        while len(t.flying) < parallel and done + len(t.flying) < trials:
            trial = study.ask()
            t.start(trial, suggest(trial, space))
        if not t.flying:
            return study
        for number in list(t.flying):
            if t.step(number):
                del t.flying[number]
        if len(t.flying) == parallel or done + len(t.flying) >= trials:
            time.sleep(poll_s)


def main(argv=None):
    p = argparse.ArgumentParser(prog="ddpctl tune", description="An Optuna study whose trials are ddpctl runs")
    p.add_argument("spec")
    p.add_argument("--space", required=True, help="the search space: a JSON file, or JSON")
    p.add_argument("--metric", required=True)
    p.add_argument("--direction", default="minimize", choices=["minimize", "maximize"])
    p.add_argument("--trials", type=int, default=12)
    p.add_argument("--parallel", type=int, default=4)
    p.add_argument("--storage", help="Optuna's storage URL (default: in memory)")
    p.add_argument("--study")
    p.add_argument("--pruner", default="median")
    p.add_argument("--poll", type=float, default=5.0)
    p.add_argument("--on")
    p.add_argument("--remote-dir")
    p.add_argument("--no-preflight", action="store_true")
    a = p.parse_args(argv)
    try:
        text = open(a.space).read() if os.path.exists(a.space) else a.space
        try:
            space = json.loads(text)
        except json.JSONDecodeError as e:
            raise TuneError(f"--space {a.space}: not JSON: {e}") from e
        client = Client(on=a.on, remote_dir=a.remote_dir)
        study = tune(client, a.spec, space, a.metric, a.direction, a.trials, a.parallel, a.storage, a.study,
                     a.pruner, a.poll, {"no_preflight": a.no_preflight},
                     log=lambda s: print(f"tune: {s}", flush=True))
    except (TuneError, DdpctlError) as e:
        print(f"ddpctl tune: error: {e}", file=sys.stderr)
        return 1
    best = [t for t in study.trials if t.value is not None]
    if best:
        print(f"tune: best trial {study.best_trial.number}: {a.metric} {study.best_value} "
              f"({json.dumps(study.best_trial.params)}, run {study.best_trial.user_attrs.get('ddpctl_run')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
