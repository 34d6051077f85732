"""A Produce request (v7+) of the usual shape read without building its partitions.

Decoding a Produce builds, per partition, a PartitionProduceData and a memoryview of its
records, and the handler then walks those objects once more to append and answer. For the
requests producers send -- no transactional id, every length short, no tagged fields (v9+;
v7-8, which aiokafka sends, have neither compact lengths nor tags) -- the
body is walked here once instead, noting only where each topic's name (or id) and each
partition's records lie in the frame. The request is still a ProduceRequest; its
``topic_data`` is an :class:`UndecodedTopics`: the handler's fast path
(broker/handlers/produce_fast.py) reads the positions, and anyone else who reads it -- a fault
rule, an ACL check, a trace row, a test -- gets the declared elements, decoded from the frame
by the generated reader on first use, equal to what that reader would have given at once.

Anything else (a transactional id, a null records value, a count or a name's length past one
varint byte, a records length past four -- 256 MB --, tagged fields) goes through the generated
reader, which also gives every DecodeError: a malformed frame makes this scanner fail or stop at
the same place, and ``decode_request`` then reads it again the generic way for the error.
Nothing here knows logs or topics.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from .builder_twin import builder_twin
from .generated_source import RANGES
from .messages.produce import ProduceRequest
from .primitives import uvarint_at

_INT32 = struct.Struct(">i").unpack_from
_ACKS_TIMEOUT = struct.Struct(">hi").unpack_from
_INT16 = struct.Struct(">h").unpack_from
_TXN_ACKS_TIMEOUT_COUNT = struct.Struct(">hhii").unpack_from
_INDEX_LENGTH = struct.Struct(">ii").unpack_from
FIRST_SCANNED_VERSION = 7  # zstd allowed (KIP-110): no codec to check per batch
FIRST_FLEXIBLE_VERSION = 9  # compact lengths, tagged fields
_BY_ID = 13  # topic ids instead of names (KIP-516)
_new = object.__new__


class UndecodedTopics:
    """A Produce request's ``topic_data`` left in its frame.

    ``topics`` is one tuple per topic entry: (first byte of its name (its length prefix) or id
    in the frame, the byte after it, its name (str) or raw 16-byte id, parts), where parts is a
    list of (partition index, first byte of its records, byte after them). As a sequence it is
    the decoded list of TopicProduceData (decoded once, on first reading). The scanner fills
    its slots directly (no ``__init__`` call per request)."""

    __slots__ = ("frame", "body", "read", "topics", "decoded")

    def __init__(self, frame: bytes, body: int, read: Callable, topics: list) -> None:
        self.frame, self.body, self.read, self.topics, self.decoded = (frame, body, read,
                                                                      topics, None)

    def elements(self) -> list:
        """The declared TopicProduceData list, as the generated reader gives it."""
        decoded = self.decoded
        if decoded is None:
            frame = self.frame
            decoded = self.decoded = self.read(frame, self.body, len(frame))[0].topic_data
        return decoded

    def __len__(self) -> int:
        return len(self.topics)

    def __iter__(self):
        return iter(self.elements())

    def __getitem__(self, index: Any) -> Any:
        return self.elements()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UndecodedTopics):
            return self.elements() == other.elements()
        if isinstance(other, (list, tuple)):
            return self.elements() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return repr(self.elements())


def scanner(version: int, generic: Callable) -> Callable:
    """The body reader for ProduceRequest at ``version``: ``generic`` (the generated
    ``read_at``) below v9, else one that scans the usual shape and hands anything else to
    ``generic``. Same signature and result as ``read_at``: (request, position after it)."""
    if version < FIRST_SCANNED_VERSION:
        return generic
    by_id = version >= _BY_ID
    twin = builder_twin(ProduceRequest)
    if twin is None:  # the class grew something a twin cannot build: decode as declared
        return generic
    if version < FIRST_FLEXIBLE_VERSION:
        return _classic_scanner(generic, twin)

    def read_at(buf, pos, end):
        body = pos
        if buf[pos]:  # a transactional id
            return generic(buf, body, end)
        acks, timeout_ms = _ACKS_TIMEOUT(buf, pos + 1)
        pos += 7
        n = buf[pos]  # the topic count plus one (compact array)
        if not 0 < n < 128:
            return generic(buf, body, end)
        pos += 1
        topics = []
        for _ in RANGES[n - 1]:  # (0 < n < 128: a range built once, generated_source.py)
            start = pos
            if by_id:
                pos += 16
                name = buf[start:pos]
                if len(name) != 16:
                    return generic(buf, body, end)
                if name.__class__ is not bytes:  # (a large frame's own buffer: uuid wants bytes)
                    name = bytes(name)
                name_end = pos
            else:
                n = buf[pos]  # the name's length plus one
                if not 0 < n < 128:
                    return generic(buf, body, end)
                pos += n
                name = buf[start + 1:pos].decode("utf-8", "replace")
            name_end = pos
            n = buf[pos]  # the partition count plus one
            if not 0 < n < 128:
                return generic(buf, body, end)
            pos += 1
            parts = []
            for _ in RANGES[n - 1]:
                index, = _INT32(buf, pos)
                n = buf[pos + 4]  # the records' length plus one, one to four bytes
                if n > 127:
                    high = buf[pos + 5]
                    if high > 127:  # a batch of 16 KB or more: a third byte, or a fourth
                        # (past four, DecodeError: decode_request reads it the generic way)
                        n, pos = uvarint_at(buf, pos + 4, end, 4)
                    else:
                        n = (n & 127) | (high << 7)
                        pos += 6
                    if n < 1:  # (null records written in more bytes than needed)
                        return generic(buf, body, end)
                elif n:
                    pos += 5
                else:  # null records
                    return generic(buf, body, end)
                records_end = pos + n - 1
                if buf[records_end]:  # the partition's tagged fields
                    return generic(buf, body, end)
                parts.append((index, pos, records_end))
                pos = records_end + 1
            if buf[pos]:  # the topic's tagged fields
                return generic(buf, body, end)
            topics.append((start, name_end, name, parts))
            pos += 1
        if buf[pos]:  # the request's tagged fields
            return generic(buf, body, end)
        return _request(twin, acks, timeout_ms, buf, body, generic, topics), pos + 1

    return read_at


def _classic_scanner(generic: Callable, twin: type) -> Callable:
    """v7-8 (aiokafka 0.14 sends v7): int16 string lengths, int32 counts and record lengths, no
    tagged fields; a null transactional id (-1) and non-null records only."""

    def read_at(buf, pos, end):
        body = pos
        tid, acks, timeout_ms, n = _TXN_ACKS_TIMEOUT_COUNT(buf, pos)
        if tid != -1 or n < 0:  # a transactional id (or a bad length), a bad count
            return generic(buf, body, end)
        pos += 12
        topics = []
        for _ in (RANGES[n] if n < 128 else range(n)):  # (n >= 0 here)
            start = pos
            n, = _INT16(buf, pos)
            if n < 0:
                return generic(buf, body, end)
            pos += 2 + n
            name = buf[start + 2:pos].decode("utf-8", "replace")
            name_end = pos
            n, = _INT32(buf, pos)
            if n < 0:
                return generic(buf, body, end)
            pos += 4
            parts = []
            for _ in (RANGES[n] if n < 128 else range(n)):
                index, n = _INDEX_LENGTH(buf, pos)
                if n < 0:  # null records
                    return generic(buf, body, end)
                pos += 8
                parts.append((index, pos, pos + n))
                pos += n
            topics.append((start, name_end, name, parts))
        if pos > end:  # records past the end: the generated reader's error
            return generic(buf, body, end)
        return _request(twin, acks, timeout_ms, buf, body, generic, topics), pos

    return read_at


def _request(twin: type, acks: int, timeout_ms: int, buf, body: int, generic: Callable,
             topics: list) -> ProduceRequest:
    """The ProduceRequest of a scanned frame, its topics left in the frame: by plain slot stores
    (its mutable twin, then the class), UndecodedTopics(buf, body, generic, topics) likewise."""
    request = twin()
    request.transactional_id = None
    request.acks = acks
    request.timeout_ms = timeout_ms
    undecoded = _new(UndecodedTopics)
    undecoded.frame = buf
    undecoded.body = body
    undecoded.read = generic
    undecoded.topics = topics
    undecoded.decoded = None
    request.topic_data = undecoded
    request.__class__ = ProduceRequest
    return request
