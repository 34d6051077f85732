"""Wire primitives: fixed-width integers, varints, strings, bytes, uuids.

Each primitive is a pair of functions: ``write_x(out: bytearray, value)`` and
``read_x(r: Reader) -> value``. The codec picks the right pair per field and version once and
caches the plan, so nothing here looks at versions. Every read checks its length against what is
left before it allocates or slices, and reports trouble as :class:`DecodeError` with the offset.
"""

from __future__ import annotations

import struct
import uuid

from .errors import DecodeError

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")


class Reader:
    """A cursor over an immutable buffer."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        pos = self.pos
        if n < 0:
            raise DecodeError(f"negative length {n}", offset=pos)
        end = pos + n
        if end > self.end:
            raise DecodeError(f"needs {n} bytes, {self.end - pos} left", offset=pos)
        self.pos = end
        return self.buf[pos:end]


def _fixed(st: struct.Struct):
    size = st.size
    unpack_from = st.unpack_from
    pack = st.pack

    def read(r: Reader):
        pos = r.pos
        if pos + size > r.end:
            raise DecodeError(f"needs {size} bytes, {r.end - pos} left", offset=pos)
        r.pos = pos + size
        return unpack_from(r.buf, pos)[0]

    def write(out: bytearray, value) -> None:
        try:
            out += pack(value)
        except struct.error as exc:
            raise ValueError(f"{value!r} does not fit: {exc}") from None

    return write, read


write_int8, read_int8 = _fixed(_I8)
write_int16, read_int16 = _fixed(_I16)
write_uint16, read_uint16 = _fixed(_U16)
write_int32, read_int32 = _fixed(_I32)
write_uint32, read_uint32 = _fixed(_U32)
write_int64, read_int64 = _fixed(_I64)
write_float64, read_float64 = _fixed(_F64)


def write_bool(out: bytearray, value: bool) -> None:
    out.append(1 if value else 0)


def read_bool(r: Reader) -> bool:
    pos = r.pos
    if pos >= r.end:
        raise DecodeError("needs 1 byte for a boolean", offset=pos)
    r.pos = pos + 1
    return r.buf[pos] != 0


def write_uuid(out: bytearray, value: uuid.UUID) -> None:
    out += value.bytes


def read_uuid(r: Reader) -> uuid.UUID:
    return uuid.UUID(bytes=bytes(r.take(16)))


# --- varints -------------------------------------------------------------------------------

def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_uvarint(r: Reader, max_bytes: int) -> int:
    buf, pos, end = r.buf, r.pos, r.end
    result = shift = 0
    for i in range(max_bytes):
        if pos >= end:
            raise DecodeError("truncated varint", offset=pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            r.pos = pos
            return result
        shift += 7
    raise DecodeError(f"varint longer than {max_bytes} bytes", offset=r.pos)


def read_uvarint(r: Reader) -> int:
    return _read_uvarint(r, 5)


def write_varint(out: bytearray, value: int) -> None:
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint cannot hold {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def read_varint(r: Reader) -> int:
    n = _read_uvarint(r, 5) & 0xFFFFFFFF
    return (n >> 1) ^ -(n & 1)


def write_varlong(out: bytearray, value: int) -> None:
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong cannot hold {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def read_varlong(r: Reader) -> int:
    n = _read_uvarint(r, 10) & 0xFFFFFFFFFFFFFFFF
    return (n >> 1) ^ -(n & 1)


# --- lengths -------------------------------------------------------------------------------
# A length prefix is either classic (int16 for strings, int32 for bytes and arrays; -1 = null)
# or compact (unsigned varint N+1; 0 = null). The readers return -1 for null.

def read_len16(r: Reader) -> int:
    return read_int16(r)


def read_len32(r: Reader) -> int:
    return read_int32(r)


def read_compact_len(r: Reader) -> int:
    return read_uvarint(r) - 1


def write_len16(out: bytearray, n: int) -> None:
    if n > 0x7FFF:
        raise ValueError(f"string of {n} bytes is longer than an int16 length allows")
    out += _I16.pack(n)


def write_len32(out: bytearray, n: int) -> None:
    out += _I32.pack(n)


def write_compact_len(out: bytearray, n: int) -> None:
    write_uvarint(out, n + 1)


def _decode_utf8(raw: bytes, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 ({exc.reason})", offset=offset) from None


def string_codec(read_len, write_len, nullable: bool):
    """Strings: a length prefix then UTF-8 bytes."""

    def read(r: Reader):
        start = r.pos
        n = read_len(r)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null string where the version forbids null" if n == -1
                              else f"negative string length {n}", offset=start)
        return _decode_utf8(r.take(n), start)

    def write(out: bytearray, value) -> None:
        if value is None:
            if not nullable:
                raise ValueError("null string where the version forbids null")
            write_len(out, -1)
            return
        raw = value.encode("utf-8")
        write_len(out, len(raw))
        out += raw

    return write, read


def bytes_codec(read_len, write_len, nullable: bool):
    """Bytes and records: a length prefix then raw bytes."""

    def read(r: Reader):
        start = r.pos
        n = read_len(r)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null bytes where the version forbids null" if n == -1
                              else f"negative bytes length {n}", offset=start)
        return bytes(r.take(n))

    def write(out: bytearray, value) -> None:
        if value is None:
            if not nullable:
                raise ValueError("null bytes where the version forbids null")
            write_len(out, -1)
            return
        write_len(out, len(value))
        out += value

    return write, read


# --- position-based readers and tagged-field sections (used by the codec's generated code) ---
# These take (buf, pos, end) and return (value, new pos), the calling convention of the code
# the codec generates, which keeps its position in a local rather than in a Reader.

def uvarint_at(buf: bytes, pos: int, end: int, max_bytes: int = 5) -> tuple[int, int]:
    result = shift = 0
    start = pos
    for _ in range(max_bytes):
        if pos >= end:
            raise DecodeError("truncated varint", offset=pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise DecodeError(f"varint longer than {max_bytes} bytes", offset=start)


def varint_at(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    n, pos = uvarint_at(buf, pos, end, 5)
    n &= 0xFFFFFFFF
    return (n >> 1) ^ -(n & 1), pos


def varlong_at(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    n, pos = uvarint_at(buf, pos, end, 10)
    n &= 0xFFFFFFFFFFFFFFFF
    return (n >> 1) ^ -(n & 1), pos


def read_tag_section(buf: bytes, pos: int, end: int, readers: dict, store) -> int:
    """A tagged-field section: unsigned varint count, then per field its tag, its size and its
    value, tags strictly ascending. ``readers`` maps a known tag to (name, read_at); each value
    is parsed from exactly its own bytes and handed to ``store(name, value)``. Unknown tags are
    skipped, as Kafka does. Returns the position after the section."""
    count, pos = uvarint_at(buf, pos, end)
    last = -1
    for _ in range(count):
        start = pos
        tag, pos = uvarint_at(buf, pos, end)
        if tag <= last:
            raise DecodeError(f"tag {tag} out of order after {last}", offset=start)
        last = tag
        size, pos = uvarint_at(buf, pos, end)
        stop = pos + size
        if stop > end:
            raise DecodeError(f"tagged field {tag} of {size} bytes overruns", offset=start)
        known = readers.get(tag)
        if known is not None:
            name, read_at = known
            value, after = read_at(buf[pos:stop], 0, size)
            if after != size:
                raise DecodeError(f"tagged field {tag} of {size} bytes holds a value of "
                                  f"{after}", offset=pos)
            store(name, value)
        pos = stop
    return pos


def write_tag_section(out: bytearray, obj, writers: tuple) -> None:
    """The tagged fields of ``obj`` whose value differs from the default, in ascending tag
    order; ``writers`` holds (tag, attribute, default, write) sorted by tag."""
    present = []
    for tag, name, default, write in writers:
        value = getattr(obj, name)
        if value != default:
            present.append((tag, write, value))
    write_uvarint(out, len(present))
    for tag, write, value in present:
        body = bytearray()
        write(body, value)
        write_uvarint(out, tag)
        write_uvarint(out, len(body))
        out += body
