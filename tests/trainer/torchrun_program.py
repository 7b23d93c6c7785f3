#!/usr/bin/python3
"""A small real DDP program for ddpctl's torchrun tests: a user's own program,
launched by torchrun (gloo, CPU), that prints its progress as such programs do
and knows nothing of ddpctl.

  --fail-rank R    the ranks meet in barriers; at the fourth, rank R raises
                   ValueError, and the others then fail on its closed
                   connection, as DDP ranks do when a peer dies
  --pause-file F   rank 0 stops after half of the first epoch until F exists
                   (the test reads `ddpctl status` at a known point)
  --show-env A,B   each rank prints these variables, as it sees them
  --until-usr1     train until SIGUSR1, then checkpoint and stop with 75, as
                   a program does that ddpctl requeues at its time limit
"""
import argparse
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--fail-rank", type=int, default=-1)
    p.add_argument("--pause-file", default="")
    p.add_argument("--show-env", default="")
    p.add_argument("--until-usr1", action="store_true")
    args = p.parse_args()
    stop = []
    if args.until_usr1:
        signal.signal(signal.SIGUSR1, lambda *_: stop.append(1))

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.show_env:
        shown = " ".join(f"{n}={os.environ.get(n, '<unset>')}" for n in args.show_env.split(","))
        print(f"rank {rank} of {world} sees {shown}", flush=True)
    if args.until_usr1:
        if rank == 0:
            print("training until SIGUSR1", flush=True)
        while not stop:
            time.sleep(0.2)
        print(f"rank {rank}: checkpointed; stopping", flush=True)
        return 75
    if args.fail_rank >= 0:
        for i in range(1000):
            dist.barrier()
            if i == 3 and rank == args.fail_rank:
                raise ValueError(f"bad batch on rank {rank} of {world}")
            time.sleep(0.05)
        return

    torch.manual_seed(1234 + rank)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    target = nn.Linear(32, 4)
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        for step in range(1, args.steps + 1):
            x = torch.randn(args.batch_size, 32)
            with torch.no_grad():
                y = target(x).argmax(dim=1)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if rank == 0 and step % 5 == 0:
                rate = step * args.batch_size * world / max(time.time() - start, 1e-6)
                print(f"Epoch [{epoch}/{args.epochs}] Step [{step}/{args.steps}] Loss: {loss.item():.4f} "
                      f"Throughput: {rate:.1f} img/s", flush=True)
            if rank == 0 and args.pause_file and epoch == 1 and step == args.steps // 2:
                while not os.path.exists(args.pause_file):
                    time.sleep(0.1)
    dist.destroy_process_group()
    if rank == 0:
        print("done", flush=True)


if __name__ == "__main__":
    sys.exit(main())
