# A DDP-shaped program for the watchdog tests: every rank meets the others at
# the end of each epoch (a stand-in for a collective, through files in the
# job's folder), and rank 1 stops at the start of epoch 1 (a stuck loader, a
# dead NFS read): the others print "epoch 1 step 0" and wait for it, as
# ranks wait in an allreduce. Runs until killed.
import os
import time

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
meet = os.path.join(os.getcwd(), "meet." + os.environ["SLURM_JOB_ID"])
os.makedirs(meet, exist_ok=True)
for epoch in range(1000):
    if epoch == 1 and rank == 1:
        time.sleep(3600)
    print(f"epoch {epoch} step 0", flush=True)
    time.sleep(0.5)  # the step's work
    open(os.path.join(meet, f"{epoch}.{rank}"), "w").close()
    while not all(os.path.exists(os.path.join(meet, f"{epoch}.{r}")) for r in range(world)):
        time.sleep(0.1)
