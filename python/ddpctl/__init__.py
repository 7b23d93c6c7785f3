"""ddpctl from Python: submit, race and sweep multi-node DDP runs on Slurm,
follow their events, read their results (docs/python.md).

    import ddpctl
    client = ddpctl.Client()                 # or Client(on="login.site.org")
    run = client.submit("job.yaml", set={"trainer.epochs": 2})
    for event in run.events(follow=True):
        print(event["type"])
    print(run.result()["runs"])

Standard library only; it drives the ddpctl binary through its versioned
JSON documents and its event stream.
"""
from .client import ENDED, SPOKEN, Client, Run, Sweep
from .errors import DdpctlError, IncompatibleBinary

__all__ = ["Client", "Run", "Sweep", "DdpctlError", "IncompatibleBinary", "SPOKEN", "ENDED"]
__version__ = "0.1.0"
