"""A hand-built ShareFetch / ShareAcknowledge codec (struct.pack), independent of kafka-emu's
declarations and interpreter: requests are written field by field from Kafka 4.2's JSON specs,
responses read the same way. Wire tests send these bytes and parse the answers with it."""

from __future__ import annotations

import struct
import uuid

SHARE_FETCH, SHARE_ACK = 78, 79


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def cstr(s: str | None) -> bytes:
    if s is None:
        return b"\x00"
    data = s.encode()
    return uvarint(len(data) + 1) + data


def carr(items, enc) -> bytes:
    return uvarint(len(items) + 1) + b"".join(enc(i) for i in items)


TAGS = b"\x00"


def frame(api_key: int, version: int, correlation_id: int, body: bytes,
          client_id: str = "hand") -> bytes:
    cid = client_id.encode()
    # request header v2: key, version, correlation id, nullable INT16 string, tags
    header = struct.pack(">hhih", api_key, version, correlation_id, len(cid)) + cid + TAGS
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def _ack_batch(b) -> bytes:
    first, last, types = b
    return struct.pack(">qq", first, last) + carr(types, lambda t: struct.pack(">b", t)) + TAGS


def share_fetch(version: int, group: str | None, member: str | None, epoch: int, *,
                topics=(), forgotten=(), max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                max_records=500, batch_size=500, acquire_mode=0, renew=False) -> bytes:
    """``topics``: [(topic_id, [(partition, [(first, last, [types])])])]."""
    body = cstr(group) + cstr(member) + struct.pack(">iiii", epoch, max_wait_ms, min_bytes,
                                                     max_bytes)
    body += struct.pack(">ii", max_records, batch_size)  # v1+
    if version >= 2:
        body += struct.pack(">b?", acquire_mode, renew)
    body += carr(list(topics), lambda t: t[0].bytes + carr(
        list(t[1]), lambda p: struct.pack(">i", p[0]) + carr(list(p[1]), _ack_batch) + TAGS)
        + TAGS)
    body += carr(list(forgotten), lambda f: f[0].bytes + carr(
        list(f[1]), lambda p: struct.pack(">i", p)) + TAGS)
    return body + TAGS


def share_ack(version: int, group: str | None, member: str | None, epoch: int, *,
              topics=(), renew=False) -> bytes:
    body = cstr(group) + cstr(member) + struct.pack(">i", epoch)
    if version >= 2:
        body += struct.pack(">?", renew)
    body += carr(list(topics), lambda t: t[0].bytes + carr(
        list(t[1]), lambda p: struct.pack(">i", p[0]) + carr(list(p[1]), _ack_batch) + TAGS)
        + TAGS)
    return body + TAGS


class _R:
    def __init__(self, data: bytes) -> None:
        self.d, self.p = data, 0

    def take(self, fmt: str):
        (v,) = struct.unpack_from(">" + fmt, self.d, self.p)
        self.p += struct.calcsize(">" + fmt)
        return v

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.d[self.p]
            self.p += 1
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def cstr(self):
        n = self.uvarint()
        if n == 0:
            return None
        s = self.d[self.p:self.p + n - 1].decode()
        self.p += n - 1
        return s

    def cbytes(self):
        n = self.uvarint()
        if n == 0:
            return None
        b = self.d[self.p:self.p + n - 1]
        self.p += n - 1
        return b

    def arr(self, fn):
        return [fn() for _ in range(self.uvarint() - 1)]

    def tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.p += self.uvarint()

    def uuid(self):
        u = uuid.UUID(bytes=self.d[self.p:self.p + 16])
        self.p += 16
        return u


def _leader(r: _R) -> tuple[int, int]:
    leader = (r.take("i"), r.take("i"))
    r.tags()
    return leader


def _endpoints(r: _R) -> list:
    def one():
        e = (r.take("i"), r.cstr(), r.take("i"), r.cstr())
        r.tags()
        return e
    return r.arr(one)


def read_share_fetch(frame_: bytes, version: int) -> dict:
    """The response as dicts; asserts the whole frame was read."""
    r = _R(frame_)
    out = {"correlation_id": r.take("i")}
    r.tags()
    out["throttle_time_ms"] = r.take("i")
    out["error_code"] = r.take("h")
    out["error_message"] = r.cstr()
    out["lock_ms"] = r.take("i")

    def acquired():
        a = (r.take("q"), r.take("q"), r.take("h"))
        r.tags()
        return a

    def partition():
        p = {"partition": r.take("i"), "error_code": r.take("h"), "error_message": r.cstr(),
             "ack_error_code": r.take("h"), "ack_error_message": r.cstr(),
             "leader": _leader(r), "records": r.cbytes(), "acquired": r.arr(acquired)}
        r.tags()
        return p

    def topic():
        t = {"topic_id": r.uuid(), "partitions": r.arr(partition)}
        r.tags()
        return t
    out["responses"] = r.arr(topic)
    out["node_endpoints"] = _endpoints(r)
    r.tags()
    assert r.p == len(frame_), "trailing bytes"
    return out


def read_share_ack(frame_: bytes, version: int) -> dict:
    r = _R(frame_)
    out = {"correlation_id": r.take("i")}
    r.tags()
    out["throttle_time_ms"] = r.take("i")
    out["error_code"] = r.take("h")
    out["error_message"] = r.cstr()
    if version >= 2:
        out["lock_ms"] = r.take("i")

    def partition():
        p = {"partition": r.take("i"), "error_code": r.take("h"), "error_message": r.cstr(),
             "leader": _leader(r)}
        r.tags()
        return p

    def topic():
        t = {"topic_id": r.uuid(), "partitions": r.arr(partition)}
        r.tags()
        return t
    out["responses"] = r.arr(topic)
    out["node_endpoints"] = _endpoints(r)
    r.tags()
    assert r.p == len(frame_), "trailing bytes"
    return out


def record_offsets(records: bytes | None) -> list[int]:
    """The offsets of every record in a RECORDS blob (magic-2 batches), by their headers."""
    out = []
    pos = 0
    while records and pos + 61 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        last_delta = struct.unpack_from(">i", records, pos + 23)[0]
        attributes = struct.unpack_from(">h", records, pos + 21)[0]
        if not attributes & 0x20:  # control batches hold no records for the application
            out.extend(range(base, base + last_delta + 1))
        pos += 12 + length
    return out


# -- DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92)

DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92


def describe_offsets(groups) -> bytes:
    """``groups``: [(group_id, None | [(topic, [partitions])])]."""
    def topic(t):
        return cstr(t[0]) + carr(t[1], lambda p: struct.pack(">i", p)) + TAGS

    def group(g):
        topics = b"\x00" if g[1] is None else carr(g[1], topic)
        return cstr(g[0]) + topics + TAGS
    return carr(groups, group) + TAGS


def alter_offsets(group, topics) -> bytes:
    """``topics``: [(topic, [(partition, start_offset)])]."""
    return cstr(group) + carr(topics, lambda t: cstr(t[0]) + carr(
        t[1], lambda p: struct.pack(">iq", *p) + TAGS) + TAGS) + TAGS


def delete_offsets(group, topics) -> bytes:
    return cstr(group) + carr(topics, lambda t: cstr(t) + TAGS) + TAGS


def read_describe_offsets(frame_: bytes, version: int) -> dict:
    r = _R(frame_)
    out = {"correlation_id": r.take("i")}
    r.tags()
    out["throttle_time_ms"] = r.take("i")

    def partition():
        p = {"partition": r.take("i"), "start_offset": r.take("q"), "leader_epoch": r.take("i")}
        if version >= 1:
            p["lag"] = r.take("q")
        p["error_code"], p["error_message"] = r.take("h"), r.cstr()
        r.tags()
        return p

    def topic():
        t = {"topic": r.cstr(), "topic_id": r.uuid(), "partitions": r.arr(partition)}
        r.tags()
        return t

    def group():
        g = {"group_id": r.cstr(), "topics": r.arr(topic), "error_code": r.take("h"),
             "error_message": r.cstr()}
        r.tags()
        return g
    out["groups"] = r.arr(group)
    r.tags()
    assert r.p == len(frame_), "trailing bytes"
    return out


def read_alter_offsets(frame_: bytes) -> dict:
    r = _R(frame_)
    out = {"correlation_id": r.take("i")}
    r.tags()
    out["throttle_time_ms"], out["error_code"], out["error_message"] = (r.take("i"),
                                                                        r.take("h"), r.cstr())

    def partition():
        p = {"partition": r.take("i"), "error_code": r.take("h"), "error_message": r.cstr()}
        r.tags()
        return p

    def topic():
        t = {"topic": r.cstr(), "topic_id": r.uuid(), "partitions": r.arr(partition)}
        r.tags()
        return t
    out["responses"] = r.arr(topic)
    r.tags()
    assert r.p == len(frame_), "trailing bytes"
    return out


def read_delete_offsets(frame_: bytes) -> dict:
    r = _R(frame_)
    out = {"correlation_id": r.take("i")}
    r.tags()
    out["throttle_time_ms"], out["error_code"], out["error_message"] = (r.take("i"),
                                                                        r.take("h"), r.cstr())

    def topic():
        t = {"topic": r.cstr(), "topic_id": r.uuid(), "error_code": r.take("h"),
             "error_message": r.cstr()}
        r.tags()
        return t
    out["responses"] = r.arr(topic)
    r.tags()
    assert r.p == len(frame_), "trailing bytes"
    return out
