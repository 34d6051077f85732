"""Size-prefixed frames out of arbitrary byte chunks.

Kafka frames are an int32 size followed by that many bytes. ``FrameBuffer.feed`` accepts
whatever the socket delivered and yields each complete frame; a size that is negative or larger
than the configured maximum (``socket.request.max.bytes``) raises FrameTooLarge / DecodeError
before anything is buffered for it. A large frame's rest can instead be read straight into a
buffer of its announced size (``room`` / ``filled``: the connection's ``recv_into``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from ..owned_bytes import OwnedBytes
from .errors import DecodeError

DEFAULT_MAX_FRAME = 104857600
# a frame's size prefix, read in place: int.from_bytes of a 4-byte slice, with its keyword,
# costs about 2.1k instructions in CPython 3.11 against 0.8k, once per frame read
_SIZE = struct.Struct(">i").unpack_from


class FrameTooLarge(DecodeError):
    pass


class FrameBuffer:
    """Frames out of chunks. Nothing is kept between chunks that end on a frame boundary (the
    usual case): frames are cut from the chunk itself. A frame that spans chunks (a big Produce)
    is kept as the list of its pieces, joined once when its last piece arrives: each byte is
    copied once into the frame, not grown into a buffer and then copied out of it. Only a size
    prefix cut by a chunk's end waits in a small bytearray. Thousands of idle connections each
    have one of these."""

    __slots__ = ("max_frame", "_buf", "_need", "_parts", "_have", "_into")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf: bytearray | None = None  # a size prefix cut by a chunk's end, so far
        self._need = -1  # size of the frame being collected, -1 while reading the prefix
        self._parts: list[bytes | memoryview] | None = None  # a partial frame's pieces
        self._have = 0  # bytes in _parts (or in _into)
        # a large partial frame's own buffer, of its announced size, read into (``room``)
        self._into: bytearray | None = None

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        pos = 0  # consumed from ``buf`` so far; cut once at the end, not once per frame
        into = self._into
        if into is not None:  # a chunk read the usual way while the frame has its buffer
            rest = self._need - self._have
            piece = chunk if len(chunk) <= rest else memoryview(chunk)[:rest]
            into[self._have:self._have + len(piece)] = piece
            if len(chunk) < rest:
                self._have += len(chunk)
                return
            self._into, self._have, self._need = None, 0, -1
            yield _whole(into)  # type: ignore[misc]
            pos = rest
        parts = self._parts
        if parts is not None:  # the frame's size is known: its pieces until it is whole
            rest = self._need - self._have
            if len(chunk) < rest:
                parts.append(chunk)
                self._have += len(chunk)
                return
            parts.append(chunk if len(chunk) == rest else memoryview(chunk)[:rest])
            self._parts, self._have, self._need = None, 0, -1
            frame = b"".join(parts)  # the frame's one copy
            parts.clear()  # (releases the last piece's view of ``chunk``)
            yield frame
            pos = rest
        buf: bytes | bytearray
        if self._buf is None:
            buf = chunk
        else:
            buf = self._buf
            buf += chunk  # a few bytes of prefix only
        try:
            while True:
                if self._need < 0:
                    if len(buf) - pos < 4:
                        return
                    size, = _SIZE(buf, pos)
                    if size < 0:
                        raise DecodeError(f"negative frame size {size}", offset=0)
                    if size > self.max_frame:
                        raise FrameTooLarge(f"frame of {size} bytes exceeds the maximum "
                                            f"{self.max_frame}", offset=0)
                    pos += 4
                    self._need = size
                end = pos + self._need
                if len(buf) < end:
                    # the rest of this frame comes in later chunks
                    piece = bytes(buf[pos:]) if buf is not chunk else (
                        memoryview(chunk)[pos:] if pos else chunk)
                    self._parts, self._have = [piece], len(piece)
                    pos = len(buf)
                    return
                with memoryview(buf) as view:
                    frame = view[pos:end].tobytes()  # the frame's one copy
                pos = end
                self._need = -1
                yield frame
        finally:
            if buf is chunk:
                if pos < len(chunk):
                    self._buf = bytearray(chunk[pos:]) if pos else bytearray(chunk)
            else:
                del buf[:pos]
                if not buf:
                    self._buf = None

    def split(self, chunk: bytes) -> list[bytes]:
        """``list(self.feed(chunk))``; a chunk of whole frames, with nothing partly read before
        it (a client waiting for each answer: one frame; a pipelining one: several), without
        the generator (about 11k instructions a frame in it, 2k here)."""
        if self._buf is None and self._need < 0 and len(chunk) >= 4:
            size, = _SIZE(chunk)
            total = len(chunk)
            if size == total - 4 and size <= self.max_frame:
                return [chunk[4:]]
            # where the frames end, if the chunk ends on a frame's end; else (a frame cut by
            # the read, a size to refuse) the generator does it all, and raises
            ends = []
            pos, limit = 0, self.max_frame
            while pos < total:
                if total - pos < 4:
                    break
                size, = _SIZE(chunk, pos)
                if size < 0 or size > limit or pos + 4 + size > total:
                    break
                pos += 4 + size
                ends.append(pos)
            else:
                frames, start = [], 0
                for end in ends:
                    frames.append(chunk[start + 4:end])
                    start = end
                return frames
        return list(self.feed(chunk))

    def room(self, least: int) -> memoryview | None:
        """Where the rest of the frame being collected goes, to be read straight from the socket
        (``recv_into``), if at least ``least`` bytes of it are still to come; else None. The
        first call gives the frame a buffer of its announced size -- checked against the
        maximum when its prefix was read, as Kafka's NetworkReceive allocates once the size is
        known -- and copies in the pieces read so far; ``filled`` then counts what a read put
        there. The frame comes out as that bytearray: no join."""
        into = self._into
        if into is None:
            parts = self._parts
            if parts is None or self._need - self._have < least:
                return None
            into = self._into = OwnedBytes(self._need)
            pos = 0
            for piece in parts:
                into[pos:pos + len(piece)] = piece
                pos += len(piece)
            parts.clear()
            self._parts = None
        return memoryview(into)[self._have:]

    def filled(self, n: int) -> bytes | OwnedBytes | None:
        """``n`` more bytes were read into ``room``'s view (released by the caller): the whole
        frame once it is complete (``_whole``), else None."""
        self._have += n
        if self._have < self._need:
            return None
        frame = self._into
        self._into, self._have, self._need = None, 0, -1
        return _whole(frame)  # type: ignore[arg-type]

    @property
    def buffered(self) -> int:
        """Bytes of a partly read frame (its size prefix included), 0 between frames."""
        if self._parts is not None or self._into is not None:
            return 4 + self._have
        buf = self._buf
        return 0 if buf is None else len(buf)


def _whole(frame: OwnedBytes) -> bytes | OwnedBytes:
    """A frame read into a buffer of its own, as the request path takes it: a Produce's as it
    is (the log keeps its batches as views of it: kafka_emu/owned_bytes.py), any other's as
    bytes, one copy. Decoded from a bytearray, a request's BYTES fields would be bytearrays --
    mutable and unhashable: a leader's SyncGroup read so (a consumer assigned 40,000 partitions:
    160 KB) closed its connection on the coordinator's lookup of equal assignments."""
    if frame[:2] == _PRODUCE:  # (the api key, int16 at the frame's start)
        return frame
    return bytes(frame)


_PRODUCE = b"\x00\x00"  # ApiKeys.PRODUCE as the frame starts with it

