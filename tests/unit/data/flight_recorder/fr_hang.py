# The programs of the recorded Flight Recorder dumps (README.md): CPU ranks
# with Gloo, every step an all_reduce, until one rank stops doing what the
# others do at step 5:
#   FR_CASE=sleep     rank FR_HANG_RANK falls asleep in a callback (the others
#                     wait for it in the next all_reduce);
#   FR_CASE=mismatch  rank FR_HANG_RANK calls broadcast where the others call
#                     all_reduce.
# With 4 ranks or more, ranks 0 and 1 also all_reduce once in a group of
# their own first, so the dumps hold two process groups. The hung rank
# creates FR_READY once it is there. Nothing in it asks for a dump: ddpctl's
# sitecustomize gives Gloo its pipe.
import os
import time

import torch
import torch.distributed as dist

CASE = os.environ.get("FR_CASE", "sleep")
HANG = int(os.environ.get("FR_HANG_RANK", "1"))


def on_step_end(step):
    if dist.get_rank() == HANG and step == 5 and CASE == "sleep":
        open(os.environ["FR_READY"], "w").close()
        time.sleep(3600)


def main():
    dist.init_process_group("gloo")
    x = torch.ones(4)
    if dist.get_world_size() >= 4:
        pair = dist.new_group([0, 1])
        if dist.get_rank() in (0, 1):
            dist.all_reduce(x, group=pair)
    for step in range(100000):
        if CASE == "mismatch" and step == 6 and dist.get_rank() == HANG:
            open(os.environ["FR_READY"], "w").close()
            dist.broadcast(x, src=0)
        else:
            dist.all_reduce(x)
        print(f"epoch 0 step {step}", flush=True)
        on_step_end(step)
        time.sleep(0.2)


main()
