# multinode.py-shaped (pytorch/examples distributed/ddp-tutorial-series) on
# CPU with Gloo: every step all_reduces, and rank 1 falls asleep in a
# callback at step 5 while the others wait for it in all_reduce. Runs until
# killed. Nothing in it asks for stacks: ddpctl's sitecustomize does.
import os
import time

import torch
import torch.distributed as dist


def on_step_end(step):
    if dist.get_rank() == 1 and step == 5:
        time.sleep(3600)


def main():
    dist.init_process_group("gloo")
    x = torch.ones(4)
    for step in range(100000):
        dist.all_reduce(x)
        print(f"epoch 0 step {step}", flush=True)
        on_step_end(step)
        time.sleep(0.2)


main()
