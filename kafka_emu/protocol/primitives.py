"""Wire primitives the generated codec and the hand-written framing code share.

``Reader`` is a cursor for the few places that parse by hand (headers, the consumer protocol's
version prefix, the admin client); ``read_int16/32`` and ``write_int16/32`` serve them. The
varint writers and the position-based ``*_at`` readers and tag-section helpers are what the code
``codegen.py`` generates calls. Reads check lengths before they slice and report trouble as
:class:`DecodeError` with the offset; strings, bytes and arrays are generated inline.
"""

from __future__ import annotations

import struct

from .errors import DecodeError

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


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


write_int16, read_int16 = _fixed(_I16)
write_int32, read_int32 = _fixed(_I32)


# --- varints -------------------------------------------------------------------------------

def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint cannot hold {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong cannot hold {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


# --- position-based readers and tagged-field sections (used by the codec's generated code) ---
# These take (buf, pos, end) and return (value, new pos), the calling convention of the code
# the codec generates, which keeps its position in a local rather than in a Reader.

def uvarint_at(buf: bytes, pos: int, end: int, max_bytes: int = 5) -> tuple[int, int]:
    # one and two bytes first, without the loop: the generated readers call this for every
    # length from 128 up (a Produce partition's records, a Fetch's), and those fit in two bytes
    if pos + 1 < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        c = buf[pos + 1]
        if c < 0x80:
            return (b & 0x7F) | (c << 7), pos + 2
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
    value. ``readers`` maps a known tag to (name, read_at); each value is parsed from exactly its
    own bytes and handed to ``store(name, value)``. Unknown tags are skipped, as Kafka does.
    Writers send tags in ascending order, but Kafka's generated readers do not check it: tags
    out of order are accepted and a repeated tag's last value wins; so here. Returns the
    position after the section."""
    count, pos = uvarint_at(buf, pos, end)
    for _ in range(count):
        start = pos
        tag, pos = uvarint_at(buf, pos, end)
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
        if value is not default and value != default:  # (a shared default: no comparison)
            present.append((tag, write, value))
    write_uvarint(out, len(present))
    for tag, write, value in present:
        body = bytearray()
        write(body, value)
        write_uvarint(out, tag)
        write_uvarint(out, len(body))
        out += body
