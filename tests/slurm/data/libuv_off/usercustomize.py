# For the Slurm tests' torchrun jobs on Debian's torch (2.6 on the 24.11
# nodes, 2.14 on 26.05's), which is built without libuv: torch reads
# USE_LIBUV=0 for init_process_group's store only, while torchrun's
# rendezvous stores (static and c10d) and its workers' agent-store clients
# create theirs with the binding's default, libuv, and fail ("use_libuv was
# requested but PyTorch was built without libuv support"). On PYTHONPATH
# with USE_LIBUV=0, Python imports this at startup (site's usercustomize,
# beside ddpctl's own sitecustomize) and every TCPStore is a plain one.
# A test fixture only: a site's torch (pip's wheels) has libuv.
import os

if os.environ.get("USE_LIBUV") == "0":
    try:
        import importlib

        import torch.distributed as _dist

        _Base = _dist.TCPStore
        # torch < 2.4 (1.13 on the 22.05 nodes) has no libuv and no such argument.
        if "use_libuv" not in (_Base.__init__.__doc__ or ""):
            raise ImportError("no use_libuv")

        class TCPStore(_Base):
            def __init__(self, *args, **kwargs):
                kwargs["use_libuv"] = False
                super().__init__(*args, **kwargs)

        for _name in (
            "torch.distributed",
            "torch.distributed.distributed_c10d",
            "torch.distributed.rendezvous",
            "torch.distributed.elastic.rendezvous.static_tcp_rendezvous",
            "torch.distributed.elastic.rendezvous.c10d_rendezvous_backend",
        ):
            try:
                _module = importlib.import_module(_name)
            except Exception:
                continue
            if getattr(_module, "TCPStore", None) is _Base:
                _module.TCPStore = TCPStore
    except Exception:
        pass
