"""Warnings that stay readable when a client misbehaves in a loop.

A client that sends garbage a thousand times a second must not write a thousand lines a second:
each kind of reason (e.g. "unsupported version", "frame read timeout") logs at most one line per
second; the next line that gets through says how many were held back meanwhile.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("kafka_emu")

INTERVAL_S = 1.0
_last: dict[str, float] = {}
_held: dict[str, int] = {}


def warn_limited(kind: str, message: str, *args: object) -> bool:
    """Log ``message % args`` at WARNING unless ``kind`` was logged within the last second.
    Returns whether the line was written."""
    now = time.monotonic()  # rate limiting of log lines only; no Kafka semantics depend on it
    if now - _last.get(kind, -INTERVAL_S) < INTERVAL_S:
        _held[kind] = _held.get(kind, 0) + 1
        return False
    _last[kind] = now
    held = _held.pop(kind, 0)
    if held:
        message += " (and %d more like it since the last such line)"
        args = (*args, held)
    log.warning(message, *args)
    return True
