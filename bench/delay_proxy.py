#!/usr/bin/env python3
"""delay_proxy.py MS CMD...: a link with MS milliseconds of latency each way.

Runs CMD (an ssh ProxyCommand, e.g. `socat - TCP:host:22`) and relays this
process's stdin to CMD's and CMD's stdout to this process's, holding every
chunk MS ms from when it was read: the delay of a long link, not a slow
one (chunks keep flowing while earlier ones wait). For bench/remote_status.sh
where the kernel has no netem qdisc (tc qdisc ... netem: "Specified qdisc
kind is unknown").
"""
import collections
import os
import subprocess
import sys
import threading
import time


def pump(delay, src, dst):
    queue = collections.deque()
    ready = threading.Condition()

    def read():
        while True:
            try:
                chunk = os.read(src, 65536)
            except OSError:
                chunk = b""
            with ready:
                queue.append((time.monotonic() + delay, chunk))
                ready.notify()
            if not chunk:
                return

    threading.Thread(target=read, daemon=True).start()
    while True:
        with ready:
            while not queue:
                ready.wait()
            due, chunk = queue.popleft()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not chunk:
            os.close(dst)
            return
        view = memoryview(chunk)
        while view:
            try:
                view = view[os.write(dst, view):]
            except OSError:
                return


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: delay_proxy.py MS CMD...")
    delay = float(sys.argv[1]) / 1000
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    up = threading.Thread(target=pump, args=(delay, 0, child.stdin.fileno()), daemon=True)
    down = threading.Thread(target=pump, args=(delay, child.stdout.fileno(), 1), daemon=True)
    up.start()
    down.start()
    down.join()
    child.wait()


if __name__ == "__main__":
    main()
