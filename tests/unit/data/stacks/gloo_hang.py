# Two Gloo ranks on 127.0.0.1: rank 1 sleeps in a callback at step 3, rank 0
# goes on into all_reduce and waits there. SIGUSR2 dumps every thread's
# Python stack (faulthandler) into stacks-<rank>.txt.
import faulthandler, os, sys, time
import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
out = open(f"/tmp/culprit-rec/faulthandler-{rank}.txt", "w")
faulthandler.register(__import__("signal").SIGUSR2, file=out, all_threads=True)


def on_step_end(step):
    if rank == 1 and step == 3:
        time.sleep(3600)


def main():
    dist.init_process_group("gloo", rank=rank, world_size=2)
    x = torch.ones(4)
    for step in range(1, 100000):
        dist.all_reduce(x)
        print(f"rank {rank} step {step}", flush=True)
        on_step_end(step)


main()
