"""Where a request frame holds values its RequestHandled row never reads: the bytes in which a
consumer's commits and fetches differ from one request to the next.

Theory of operation. The trace encoder keeps what two frames decode to by their bytes
(``frame_rows._DECODED``), so that a member's Heartbeats are decoded once. But a consuming
member's OffsetCommit names a new offset every time and its Fetch a new fetch offset, so every
such request was a frame never seen before: decoded again, its row made again, about four times
the cost of one seen before. The row holds neither offset: it reads a request's group, member,
instance, generation and timeouts, and the (topic, partition) pairs it names (``ROW_READS``, the
names event_rows.py and request_walk.py read), never its offsets, epochs or byte limits.

So ``free_spans`` finds the bytes of the fields a row never reads whose encoding is a fixed
number of bytes whatever the value: int16, int32 and int64 fields, not tagged (a tagged field is
written or not by its value). Reading such a field takes the same bytes whatever they hold, and
no other field's place or value depends on it, so two frames of the same length that differ
only inside those bytes decode to requests that differ only in those fields -- and make the same
row. ``frame_rows`` keys a frame by its bytes outside them (``slicer``), so a commit of a new
offset finds the entry of the member's previous commit.

Where the fields are is found from the decoded request, by the codec itself rather than by a
second reading of the layout here: encoded again it must be the frame, byte for byte (a frame
written otherwise -- fields the codec skips, an encoding that is not the shortest -- gets no
spans: keyed whole, as before); encoded with every such field's bits flipped, the bytes that
differ from the frame are exactly those fields' (flipping every bit changes every byte of a
fixed-width field and nothing else), and must be as many as the flipped fields' widths. As a
guard on ``ROW_READS``, the row made from the flipped request must be the row made from the
request; otherwise no spans.
"""

from __future__ import annotations

import operator
import re
from typing import Any, Callable

import attrs

from ..protocol.headers import encode_request
from ..protocol.schema import INT16, INT32, INT64, Array, fields_of
from .event_rows import _GENERATION_ALIAS, _IDENTITY

# every field name a RequestHandled row reads of a request, at any depth (event_rows.py's
# identity and timeouts, FindCoordinator's key; request_walk.py's topics and partitions)
ROW_READS = frozenset({*_IDENTITY, _GENERATION_ALIAS, "key", "key_type", "session_timeout_ms",
                       "rebalance_timeout_ms", "partition_index", "partition", "partitions",
                       "name", "topic", "topic_id"})
_WIDTHS = {INT16: 2, INT32: 4, INT64: 8}
_RUN = re.compile(b"[^\x00]+")  # (runs of bytes that differ, in the frames' XOR)

# (request class, version) -> what to flip of such a request: (field name, width) for a free
# field, (field name, None) for an array of structs or a struct holding some
_PLANS: dict[tuple[type, int], tuple[tuple[str, int | None], ...]] = {}


def _plan(cls: type, version: int) -> tuple[tuple[str, int | None], ...]:
    plan = _PLANS.get((cls, version))
    if plan is None:
        found: list[tuple[str, int | None]] = []
        for f in fields_of(cls):
            if version not in f.versions or (f.tag is not None and version in f.tagged):
                continue
            inner = f.type.element if isinstance(f.type, Array) else f.type
            if f.type in _WIDTHS:
                if f.name not in ROW_READS:
                    found.append((f.name, _WIDTHS[f.type]))
            elif isinstance(inner, type) and attrs.has(inner) and _plan(inner, version):
                found.append((f.name, None))
        plan = _PLANS[(cls, version)] = tuple(found)
    return plan


def has_free_fields(cls: type, version: int) -> bool:
    """Whether requests of ``cls`` at ``version`` can have free spans at all."""
    return bool(_plan(cls, version))


def _flipped(obj: Any, version: int, widths: list[int]) -> Any:
    """``obj`` with every free field's bits flipped (``~v``: every bit of the two's complement,
    in range for a signed field), each flipped field's width added to ``widths``."""
    changes = {}
    for name, width in _plan(type(obj), version):
        value = getattr(obj, name)
        if width is not None:
            changes[name] = ~value
            widths.append(width)
        elif type(value) is list:
            changes[name] = [_flipped(v, version, widths) for v in value]
        elif attrs.has(type(value)):
            changes[name] = _flipped(value, version, widths)
    return attrs.evolve(obj, **changes)


def free_spans(api: Any, version: int, frame: bytes, client_id: str | None, request: Any,
               same_row: Callable[[Any], bool]) -> tuple[tuple[int, int], ...]:
    """The (start, end) byte ranges of ``frame`` (a request frame, no size prefix) holding
    ``request``'s free fields -- adjacent fields as one range -- or () where none can be shown
    (see the module's docstring). ``same_row(flipped)``: whether a request with those fields
    flipped makes ``request``'s row."""
    if not _plan(type(request), version):
        return ()
    widths: list[int] = []
    flipped = _flipped(request, version, widths)
    spans = _flipped_bytes(api, version, frame, client_id, request, flipped, sum(widths))
    if not widths or spans is None or not same_row(flipped):
        return ()
    return spans


def _flipped_bytes(api: Any, version: int, frame: bytes, client_id: str | None, request: Any,
                   flipped: Any, width: int) -> tuple[tuple[int, int], ...] | None:
    """The runs of bytes in which ``flipped`` (``request`` with fields' bits flipped, ``width``
    bytes of them) encodes otherwise than ``frame`` -- or None unless ``request`` encodes as
    ``frame`` byte for byte, ``flipped`` to as many bytes, and they differ in exactly ``width``
    bytes, every bit of each flipped, none in the header's first 8 bytes (the key leaves those
    out: frame_rows)."""
    correlation = int.from_bytes(frame[4:8], "big", signed=True)
    if encode_request(api, version, correlation, client_id, request)[4:] != frame:
        return None
    other = encode_request(api, version, correlation, client_id, flipped)[4:]
    if len(other) != len(frame):
        return None
    size = len(frame)
    differ = (int.from_bytes(frame, "big") ^ int.from_bytes(other, "big")).to_bytes(size, "big")
    spans = tuple(m.span() for m in _RUN.finditer(differ))
    if (not spans or sum(end - start for start, end in spans) != width or spans[0][0] < 8
            or differ.count(b"\xff") != width):
        return None
    return spans


def slicer(spans: tuple[tuple[int, int], ...]) -> Callable[[bytes], tuple[bytes, ...]]:
    """``frame -> the pieces of frame[8:] outside spans`` (a tuple: one C call)."""
    cuts = [8, *(edge for span in spans for edge in span)]
    return operator.itemgetter(*(slice(start, end) for start, end in
                                 zip(cuts[::2], [*cuts[1::2], None])))


def commit_offset_at(api: Any, version: int, frame: bytes, client_id: str | None,
                     request: Any) -> int | None:
    """Where the committed offset of ``request`` -- a one-partition OffsetCommit, decoded from
    ``frame`` -- sits in ``frame`` (its first byte), found as ``free_spans`` finds spans, with
    only that offset's bits flipped: 8 bytes, all flipped. None where not shown. A frame that
    finds the same entry in ``frame_rows``'s table has it in the same place (the same bytes but
    in fixed-width fields)."""
    topic = request.topics[0]
    partition = topic.partitions[0]
    flipped = attrs.evolve(request, topics=[attrs.evolve(topic, partitions=[
        attrs.evolve(partition, committed_offset=~partition.committed_offset)])])
    spans = _flipped_bytes(api, version, frame, client_id, request, flipped, 8)
    return spans[0][0] if spans is not None and len(spans) == 1 else None
