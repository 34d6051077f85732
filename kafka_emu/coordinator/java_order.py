"""The iteration order of a ``java.util.HashMap<String, V>``, where Kafka's choices depend on it.

Kafka's coordinator counts protocol votes in a fresh ``HashMap`` and keeps the first of equal
maxima in its iteration order (``ClassicGroup.selectProtocol``: ``entrySet().stream().max``,
which keeps the earlier of two equal elements). That order is not arbitrary; it depends only on
the keys and the order they were put:
- a key's bucket is ``(h ^ (h >>> 16)) & (capacity - 1)`` with ``h = String.hashCode()``;
- the table starts at 16 buckets and doubles whenever the size passes 3/4 of it (a resize splits
  each bucket in two and keeps the relative order inside each half);
- iteration walks the buckets in index order, and inside a bucket the keys in the order they were
  first put (bins of eight or more colliding keys in a table of 64 or more turn into trees, whose
  order we do not model; no real protocol list comes near that).
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75


def string_hash(text: str) -> int:
    """Java's ``String.hashCode()``: s[0]*31^(n-1) + ... over UTF-16 code units, as an int32."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def bucket(text: str, capacity: int) -> int:
    """HashMap.hash(key) spread over a table of ``capacity`` (a power of two) buckets."""
    h = string_hash(text) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def capacity_for(size: int) -> int:
    """Table size of a default ``new HashMap<>()`` after ``size`` distinct keys were put."""
    capacity = DEFAULT_CAPACITY
    while size > capacity * LOAD_FACTOR:
        capacity *= 2
    return capacity


def hashmap_order(keys: Iterable[str]) -> list[str]:
    """Iteration order of a new HashMap after putting ``keys`` in this order (repeats ignored)."""
    first_put = list(dict.fromkeys(keys))
    capacity = capacity_for(len(first_put))
    # sorted() is stable: keys sharing a bucket keep the order they were first put.
    return sorted(first_put, key=lambda key: bucket(key, capacity))
