#!/usr/bin/python3
"""ddp-train --allreduce-bench as the Slurm 24.11 and 26.05 nodes can run it.

Their nodes (Debian trixie's and forky's chroots) have python3-torch but no
ddp-train of this build (it links the host's LibTorch 1.13). This measures
what ddp-train --allreduce-bench measures, the same way, with the nodes'
torch: one process a task (rank SLURM_PROCID of SLURM_NTASKS), Gloo over
MASTER_ADDR:MASTER_PORT on the fabric's interface, an all-reduce of SIZE
bytes of fp32, one warm-up and ITERS timed; rank 0 prints ddp-train's line,
    {"allreduce": {"bytes": B, "ranks": N, "busbw_gbs": G, "seconds": S}}
with busbw = algbw x 2(N-1)/N, as nccl-tests (and ddp-train) report it.
Every rank first says it ran (a test sees it was called). Other arguments
(the launcher's, the model's) are taken and ignored; --allreduce-pairs is
not done here (the bisection's journey runs on 22.05's ddp-train).
"""
import json
import os
import socket
import sys
import time


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main(argv):
    sizes, iters = None, 5
    for i, a in enumerate(argv):
        if a == "--allreduce-bench" or a.startswith("--allreduce-bench="):
            text = argv[i + 1] if a == "--allreduce-bench" else a.split("=", 1)[1]
            sizes = sorted(size_bytes(x) for x in text.split(","))
        elif a == "--bench-iters":
            iters = int(argv[i + 1])
        elif a == "--allreduce-pairs":
            print("allreduce_bench.py: --allreduce-pairs is ddp-train's alone", file=sys.stderr)
            return 2
    if not sizes:
        print("allreduce_bench.py: only --allreduce-bench SIZE[,SIZE...] is measured here", file=sys.stderr)
        return 2
    rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
    ifname = os.environ.get("NCCL_SOCKET_IFNAME", "")
    if ifname and os.path.exists(f"/sys/class/net/{ifname}"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", ifname)
    # Debian's torch has no libuv; 2.4 and later ask for it in the TCP store.
    os.environ.setdefault("USE_LIBUV", "0")
    import torch
    import torch.distributed as dist

    print(f"allreduce_bench.py: rank {rank} of {world} on {socket.gethostname()}, torch {torch.__version__}",
          flush=True)
    init = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    for size in sizes:
        t = torch.ones(size // 4, dtype=torch.float32)
        dist.all_reduce(t)  # warm-up: the connections, the buffers
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        seconds = (time.perf_counter() - start) / iters
        algbw = size / seconds / 1e9
        if rank == 0:
            line = {"allreduce": {"bytes": size, "ranks": world, "iters": iters, "seconds": seconds,
                                  "algbw_gbs": algbw, "busbw_gbs": algbw * 2 * (world - 1) / world,
                                  "backend": "gloo", "by": "tests/slurm/allreduce_bench.py"}}
            print(json.dumps(line), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
