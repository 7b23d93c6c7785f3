#!/usr/bin/python3
"""A small real DDP program for ddpctl's torchrun tests: a user's own program,
launched by torchrun (gloo, CPU), that prints its progress as such programs do
and knows nothing of ddpctl.

  --fail-rank R    the ranks meet in barriers; at the fourth, rank R raises
                   ValueError, and the others then fail on its closed
                   connection, as DDP ranks do when a peer dies
  --pause-file F   rank 0 stops after half of the first epoch until F exists
                   (the test reads `ddpctl status` at a known point)
"""
import argparse
import os
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
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
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
