"""The one place that reads a clock.

Milliseconds since the epoch, advancing with trio's clock: under trio's MockClock (tests with
``autojump_clock``) time jumps exactly as the mock does, so session and rebalance timeouts can
be tested without sleeping, while values still look like Kafka timestamps.
"""

from __future__ import annotations

import time

import trio


class Clock:
    def __init__(self) -> None:
        self._trio_start = trio.current_time()
        self._epoch_start_ms = int(time.time() * 1000)

    def now_ms(self) -> int:
        return self._epoch_start_ms + int((trio.current_time() - self._trio_start) * 1000)

    def trio_time(self, deadline_ms: int) -> float:
        """The trio clock value at which ``now_ms()`` reaches ``deadline_ms``."""
        return self._trio_start + (deadline_ms - self._epoch_start_ms) / 1000


def io_now() -> float:
    """Seconds on trio's clock, for I/O time limits (idle connections, slow frames): wall time,
    never moved by anything that controls the coordinator's time."""
    return trio.current_time()


def stopwatch():
    """A function giving the wall-clock milliseconds since this call (request latencies)."""
    start = time.perf_counter()
    return lambda: (time.perf_counter() - start) * 1000
