# A data-parallel program's rhythm without torch: every step each rank does
# the same computation, then all meet (rank 0 takes a byte from every other
# rank and answers each), as in an allreduce: the fast ranks sleep in recv
# while the slowest still computes. Rank 0 prints "step N" every 10 steps.
# On SIGUSR1 (the requeue signal, passed on by the job script) it exits 75.
import os
import signal
import socket
import sys
import time

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
signal.signal(signal.SIGUSR1, lambda *_: sys.exit(75))

if rank == 0:
    server = socket.create_server(("", port))
    peers = [server.accept()[0] for _ in range(world - 1)]
else:
    deadline = time.time() + 120
    while True:
        try:
            peer = socket.create_connection((addr, port))
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def compute():
    x = 0
    for i in range(200000):
        x += i * i
    return x


step = 0
while True:
    compute()
    if rank == 0:
        for p in peers:
            if not p.recv(1):
                sys.exit("a rank left")
        for p in peers:
            p.sendall(b"y")
    else:
        peer.sendall(b"x")
        if not peer.recv(1):
            sys.exit("rank 0 left")
    step += 1
    if rank == 0 and step % 10 == 0:
        print(f"step {step}", flush=True)
