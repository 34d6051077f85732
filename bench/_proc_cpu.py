"""CPU time a process has used so far, read from /proc: the benchmarks' one way to measure a
server's CPU from outside it."""

from __future__ import annotations

import os


def cpu_ns(pid: int) -> int:
    """All its threads' CPU time, in nanoseconds (each thread's schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that just ended
    return total
