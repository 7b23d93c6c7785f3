# Like stalled_rank.py, but the program checkpoints the epoch it reached and
# resumes from it: on the job's first attempt rank 1 stops at the start of
# epoch 1 (the others wait for it, as in a collective); on a later attempt
# (a requeue, SLURM_RESTART_COUNT > 0) every rank resumes from the checkpoint
# and trains to epoch 3.
import os
import time

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
attempt = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
here = os.getcwd()
checkpoint = os.path.join(here, "checkpoint." + os.environ["SLURM_JOB_ID"])
meet = os.path.join(here, f"meet.{os.environ['SLURM_JOB_ID']}.{attempt}")
os.makedirs(meet, exist_ok=True)
start = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
if start:
    print(f"resuming from the checkpoint of epoch {start - 1}", flush=True)
for epoch in range(start, 4):
    if epoch == 1 and rank == 1 and attempt == 0:
        time.sleep(3600)
    print(f"epoch {epoch} step 0", flush=True)
    time.sleep(0.5)
    open(os.path.join(meet, f"{epoch}.{rank}"), "w").close()
    while not all(os.path.exists(os.path.join(meet, f"{epoch}.{r}")) for r in range(world)):
        time.sleep(0.1)
    if rank == 0:
        with open(checkpoint + ".tmp", "w") as f:
            f.write(str(epoch + 1))
        os.replace(checkpoint + ".tmp", checkpoint)
print("done", flush=True)
