"""One study of bench/tune.sh, run on the cluster's login host: 12 trials of
the bundled trainer's 2-node shapes, their parameters fixed in advance
(enqueued, so the adaptive study and its baseline try the same ones), a
median pruner, and a line per event with its time for the shell to read.

    tune_study.py MODE STORAGE STUDY SPEC [KILL_AFTER]
MODE: adaptive (ddpctl tune: K in flight, the next asked as one ends) or
batch (the baseline: 4 asked, all 4 waited for, then the next 4, as
Hydra's Optuna sweeper with the submitit launcher does). KILL_AFTER: the
process kills itself (SIGKILL) once that many trials are submitted.
"""
import os
import signal
import sys
import time

import optuna

from ddpctl import Client
from ddpctl import tune as T

mode, storage, name, spec = sys.argv[1:5]
kill_after = int(sys.argv[5]) if len(sys.argv) > 5 else None
SPACE = {"trainer.lr": {"log_uniform": [1e-3, 3e-1]}, "trainer.epochs": {"int": [1, 4]}}
PARAMS = [(0.01, 4), (0.02, 1), (0.2, 2), (0.005, 3), (0.05, 1), (0.1, 4),
          (0.003, 2), (0.03, 1), (0.15, 3), (0.008, 2), (0.04, 4), (0.25, 1)]
PARALLEL = 4


def say(line):
    print(f"{time.time():.3f} {line}", flush=True)


def log(line):
    say(line)
    if kill_after is not None and line.startswith(f"trial {kill_after - 1}: run"):
        say("killed")
        os.kill(os.getpid(), signal.SIGKILL)


optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(study_name=name, storage=storage, load_if_exists=True,
                            pruner=optuna.pruners.MedianPruner(n_startup_trials=2))
if not study.trials:
    for lr, epochs in PARAMS:
        study.enqueue_trial({"trainer.lr": lr, "trainer.epochs": epochs})
client = Client()
options = {"no_preflight": True}
say("start")
if mode == "adaptive":
    T.tune(client, spec, SPACE, "train_loss", trials=len(PARAMS), parallel=PARALLEL, storage=storage,
           study_name=name, poll_s=1.0, submit_options=options, log=log)
else:
    study.set_user_attr("ddpctl", {"spec": os.path.abspath(spec), "space": SPACE, "metric": "train_loss"})
    t = T.Trials(client, spec, SPACE, "train_loss", study, optuna, log, options)
    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL)
    while len(study.get_trials(deepcopy=False, states=finished)) < len(PARAMS):
        done = len(study.get_trials(deepcopy=False, states=finished))
        for _ in range(min(PARALLEL, len(PARAMS) - done)):
            trial = study.ask()
            t.start(trial, T.suggest(trial, SPACE))
        while t.flying:  # the batch's barrier
            for number in list(t.flying):
                if t.step(number):
                    del t.flying[number]
            time.sleep(1.0)
say("end")
for tr in study.trials:
    say(f"state {tr.number} {tr.state.name} {tr.user_attrs.get('ddpctl_run')} {tr.user_attrs.get('ddpctl_job')}")
