"""The one place that reads a clock.

Milliseconds since the epoch, advancing with trio's clock: under trio's MockClock (tests with
``autojump_clock``) time jumps exactly as the mock does, so session and rebalance timeouts can
be tested without sleeping, while values still look like Kafka timestamps. The control plane
moves it forward (``advance``) or freezes it (manual mode); nothing else changes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
import time

import trio


class Clock:
    """The coordinator's time: real (trio's clock plus whatever the control plane added with
    ``advance``) or manual (frozen at the start plus what was added: time moves only when told).

    Only group semantics read it (session, rebalance and retention timers, commit timestamps,
    event times, log append times). I/O waits use ``io_now`` and trio's own timeouts, so a
    Fetch long-poll or an idle connection keeps wall time in both modes.
    """

    def __init__(self, *, manual: bool = False) -> None:
        self.manual = manual
        self._trio_start = trio.current_time()
        self._epoch_start_ms = int(time.time() * 1000)
        self._offset_ms = 0  # added by advance()
        # Under trio's SystemClock, trio time is a fixed offset plus time.perf_counter(), so a
        # perf_counter reading taken for a latency also says what now_ms() was then (``ms_at``)
        # at a tenth of the cost of asking. Other clocks (MockClock in tests) are asked.
        # (trio's SystemClock is not public: recognised by name and its ``offset`` field.)
        runner_clock = trio.lowlevel.current_clock()
        offset = getattr(runner_clock, "offset", None)
        self._perf_shift: float | None = (
            offset if type(runner_clock).__name__ == "SystemClock" and isinstance(offset, float)
            and abs(runner_clock.current_time() - (offset + time.perf_counter())) < 1.0
            else None)
        self._make_ms_at()

    def now_ms(self) -> int:
        if self.manual:
            return self._epoch_start_ms + self._offset_ms
        if self._perf_shift is not None:  # the same value (``ms_at``), without trio's layers
            return self.ms_at(time.perf_counter())
        return self._epoch_start_ms + self._offset_ms + int((trio.current_time() - self._trio_start) * 1000)

    def _make_ms_at(self) -> None:
        """``ms_at(perf)``: ``now_ms()`` as it was when ``time.perf_counter()`` read ``perf`` --
        for a reading taken just now: an ``advance`` in between would be counted as if made
        before it. A closure over this clock's constants, remade when they change (it runs
        once per observed request)."""
        base = self._epoch_start_ms + self._offset_ms
        shift, start = self._perf_shift, self._trio_start
        # ``ms_later``: ``ms_at`` where its answer depends on its argument alone (a function of
        # this clock's constants, which a change replaces), so that it may be asked later --
        # a request kept by reference (broker/event_rows.py) stores it and its reading, not the
        # answer; None where ``ms_at`` asks the clock (it must be asked at once)
        self.ms_later: Callable[[float], int] | None
        # ``ms_at(perf)`` is ``ms_cache[2]`` for ``ms_cache[0] <= perf < ms_cache[1]``: the
        # request path tests that inline, without the call (never true: ask ``ms_at``)
        self.ms_cache: list = [math.inf, -math.inf, 0]
        # ``ms_later``'s constants, plain values for another process (``ms_from``): the trace
        # writer's records carry them and the reading (broker/frame_rows.py); None with ms_later
        self.ms_constants: tuple[int, float | None, float | None] | None = (base, shift, start)
        if self.manual:
            self.ms_at: Callable[[float], int] = lambda perf: base
            self.ms_later = self.ms_at
            self.ms_cache = [-math.inf, math.inf, base]  # always base
            self.ms_constants = (base, None, None)
        elif shift is None:
            self.ms_at = lambda perf: self.now_ms()
            self.ms_later = self.ms_constants = None
        else:
            # the same float operations as now_ms() on trio.current_time() == shift + perf,
            # done once per millisecond: readings in [lo, hi) give the value of the last one
            # done (every float operation here is monotonic, and ``hi`` stays a microsecond
            # short of where the expression reaches the next millisecond -- float rounding at
            # these magnitudes is ten thousand times smaller), so the answer is the same
            # [lo, hi, value]: this closure's own (an older one, kept by a record read later,
            # never touches the newer one's), and ``ms_cache`` for a caller to test inline
            cache = self.ms_cache = [-math.inf, -math.inf, base]

            def ms_at(perf: float) -> int:
                if cache[0] <= perf < cache[1]:
                    return cache[2]
                elapsed = int((shift + perf - start) * 1000)
                value = cache[2] = base + elapsed
                cache[0] = perf
                cache[1] = ((elapsed + 1) / 1000 - shift + start - 1e-6 if elapsed >= 0
                            else -math.inf)
                return value
            self.ms_at = self.ms_later = ms_at

    @property
    def advanced_ms(self) -> int:
        """How far ``advance`` has moved this clock in total."""
        return self._offset_ms

    def advance(self, ms: int) -> None:
        """Move this clock forward by ``ms`` (>= 0); the caller fires what falls due."""
        if ms < 0:
            raise ValueError(f"time only moves forward, not by {ms} ms")
        self._offset_ms += ms
        self._make_ms_at()

    def trio_time(self, deadline_ms: int) -> float:
        """The trio clock value at which ``now_ms()`` reaches ``deadline_ms`` (never, in manual
        mode: only ``advance`` gets it there)."""
        if self.manual:
            return math.inf
        return self._trio_start + (deadline_ms - self._epoch_start_ms - self._offset_ms) / 1000


def ms_from(constants: tuple[int, float | None, float | None], perf: float) -> int:
    """``ms_later(perf)`` of the clock setting whose ``ms_constants`` these are: its expression,
    which its millisecond cache answers the same for every reading (see ``_make_ms_at``)."""
    base, shift, start = constants
    if shift is None or start is None:  # (manual)
        return base
    return base + int((shift + perf - start) * 1000)


def io_now() -> float:
    """Seconds on trio's clock, for I/O time limits (idle connections, slow frames): wall time,
    never moved by anything that controls the coordinator's time."""
    return trio.current_time()


perf_now = time.perf_counter  # wall-clock seconds for latencies (``Clock.ms_at`` reads them)


def stopwatch():
    """A function giving the wall-clock milliseconds since this call (request latencies)."""
    start = time.perf_counter()
    return lambda: (time.perf_counter() - start) * 1000
