"""Log lines that stay readable when a client misbehaves in a loop.

A client that sends garbage a thousand times a second must not write a thousand lines a second:
each kind of reason (e.g. "unsupported version", "frame read timeout") logs at most one line per
second; the next line that gets through says how many were held back meanwhile. ``allow`` is the
limiter itself, with a budget of lines per second per kind; the group event lines of log_sink.py
use it too, with a larger budget.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("kafka_emu")

INTERVAL_S = 1.0
_clock = time.monotonic  # rate limiting of log lines only; no Kafka semantics depend on it
_last: dict[str, float] = {}  # kind -> start of its current interval
_sent: dict[str, int] = {}  # kind -> lines written in that interval
_held: dict[str, int] = {}


def allow(kind: str, per_interval: int = 1) -> int | None:
    """Whether a line of ``kind`` may be written now, at most ``per_interval`` per second: None
    if not (the line is counted as held back), else how many were held back since the last
    line of its kind that got through, for that line to say."""
    now = _clock()
    if now - _last.get(kind, -INTERVAL_S) >= INTERVAL_S:
        _last[kind], _sent[kind] = now, 0
    if _sent[kind] >= per_interval:
        _held[kind] = _held.get(kind, 0) + 1
        return None
    _sent[kind] += 1
    return _held.pop(kind, 0)


def warn_limited(kind: str, message: str, *args: object) -> bool:
    """Log ``message % args`` at WARNING unless ``kind`` was logged within the last second.
    Returns whether the line was written."""
    held = allow(kind)
    if held is None:
        return False
    if held:
        message += " (and %d more like it since the last such line)"
        args = (*args, held)
    log.warning(message, *args)
    return True
