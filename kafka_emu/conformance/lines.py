"""What the kit accepts from a verifiable client's stdout, and the fields it needs.

A line is a contract event (a JSON object with a ``name``), a broken event (it names a
contract event but does not parse: ``kit_bad_line``, which the tracker reports as the
``contract`` rule with the line), or anything else, which is ignored (librdkafka's client
prints its arguments and "Created assignment" there; the contract allows other output). The
field readers raise :class:`Malformed` for a field the kit needs that is missing or of the
wrong type; the tracker turns that into the ``contract`` rule, quoting the line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

TP = tuple[str, int]

# The events of the contract; a line naming one that does not parse is a broken event, not noise.
CONTRACT_EVENTS = ("startup_complete", "shutdown_complete", "partitions_assigned",
                   "partitions_revoked", "records_consumed", "offsets_committed",
                   "producer_send_success", "producer_send_error")


def parse_line(line: str) -> dict[str, Any] | None:
    """One stdout line as the kit reads it: a contract event (a JSON object with a ``name``),
    ``kit_bad_line`` for a line that names a contract event but is not a JSON object (the
    tracker reports it), or None for anything else (librdkafka's client prints its arguments
    and "Created assignment" there; the contract allows other output)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError as exc:
        named = [n for n in CONTRACT_EVENTS if f'"{n}"' in line]
        if named:
            return {"name": "kit_bad_line", "event": named[0], "error": f"not JSON ({exc})"}
        return None
    if isinstance(event, dict) and isinstance(event.get("name"), str):
        return event
    return None


class Malformed(ValueError):
    """An event without a field the kit needs, or with one of the wrong type."""


def int_field(item: dict[str, Any], key: str) -> int:
    value = item.get(key) if isinstance(item, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{key!r} must be an integer, got {value!r}")
    return value


def list_field(event: dict[str, Any], key: str) -> list[Any]:
    value = event.get(key)
    if not isinstance(value, list):
        raise Malformed(f"{key!r} must be a list, got {value!r}")
    return value


def tp_of(item: Any) -> TP:
    if not isinstance(item, dict) or not isinstance(item.get("topic"), str):
        raise Malformed(f"a partition needs a string 'topic', got {item!r}")
    return item["topic"], int_field(item, "partition")


def tps(items: Iterable[dict[str, Any]]) -> list[TP]:
    return [tp_of(i) for i in items]
