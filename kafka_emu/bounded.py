"""Small tables of shared values, bounded by clearing them when full.

The request path shares one immutable value per distinct key -- a peer's host string, the
frozen answer to the usual one-partition commit -- so that the thousandth equal request builds
nothing. The keys come from clients (addresses, topic names), so a table must not grow without
bound: when it is full it is cleared and sharing starts over, which costs one rebuild per key
and keeps every lookup a plain ``dict.get`` (callers look up first and call ``remember`` only on
a miss). ``shared_number`` is the same idea for the ints members carry (an LRU of the same size).
"""

from __future__ import annotations

import functools
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

LIMIT = 4096


def remember(table: dict[K, V], key: K, value: V) -> V:
    """Store ``value`` under ``key`` (clearing a full table first) and return it."""
    if len(table) >= LIMIT:
        table.clear()
    table[key] = value
    return value


@functools.lru_cache(maxsize=LIMIT)
def shared_number(value: int) -> int:
    """One int object per value: timeouts past 256 are an int object each (32 bytes) unless
    shared, and thousands of members and their parked requests carry the same few."""
    return value
