# A DDP-shaped loop on CPU with Gloo whose rank 1 blocks in its Dataset's
# __getitem__, reading a FIFO nobody writes (as a read from a dead NFS
# server or a stuck object store blocks), at the first sample of batch 5;
# the other ranks take batch 5 and wait in all_reduce for it. With
# `--workers N` (N > 0) the read blocks in one of rank 1's DataLoader worker
# processes, while rank 1's own process waits for that batch. Every rank
# prints "epoch 0 step S" after each step. Runs until killed.
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset

BATCH = 4


class Samples(Dataset):
    def __init__(self, rank, fifo):
        self.rank, self.fifo = rank, fifo

    def __len__(self):
        return 100000

    def __getitem__(self, index):
        if self.rank == 1 and index == 5 * BATCH:
            with open(self.fifo) as f:  # the hang: nobody opens it for writing
                f.read()
        return torch.full((4,), float(index))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    fifo = os.path.join(os.getcwd(), f"loader-hang.{os.environ['SLURM_JOB_ID']}.{rank}.fifo")
    if rank == 1:
        os.mkfifo(fifo)
    loader = DataLoader(Samples(rank, fifo), batch_size=BATCH, num_workers=args.workers)
    for step, batch in enumerate(loader):
        total = batch.sum(0)
        dist.all_reduce(total)
        print(f"epoch 0 step {step}", flush=True)
        time.sleep(0.2)


# A worker started by a forkserver or spawn (Python 3.14's default) imports
# this file again: only the rank's own process runs it.
if __name__ == "__main__":
    main()
