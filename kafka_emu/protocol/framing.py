"""Size-prefixed frames out of arbitrary byte chunks.

Kafka frames are an int32 size followed by that many bytes. ``FrameBuffer.feed`` accepts
whatever the socket delivered and yields each complete frame; a size that is negative or larger
than the configured maximum (``socket.request.max.bytes``) raises FrameTooLarge / DecodeError
before anything is buffered for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from .errors import DecodeError

DEFAULT_MAX_FRAME = 104857600


class FrameTooLarge(DecodeError):
    pass


class FrameBuffer:
    __slots__ = ("max_frame", "_buf", "_need")  # one per connection

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self._need = -1  # size of the frame being collected, -1 while reading the prefix

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        buf = self._buf
        buf += chunk
        pos = 0  # consumed so far; cut once at the end, not once per frame
        try:
            while True:
                if self._need < 0:
                    if len(buf) - pos < 4:
                        return
                    size = int.from_bytes(buf[pos:pos + 4], "big", signed=True)
                    if size < 0:
                        raise DecodeError(f"negative frame size {size}", offset=0)
                    if size > self.max_frame:
                        raise FrameTooLarge(f"frame of {size} bytes exceeds the maximum "
                                            f"{self.max_frame}", offset=0)
                    pos += 4
                    self._need = size
                end = pos + self._need
                if len(buf) < end:
                    return
                with memoryview(buf) as view:
                    frame = view[pos:end].tobytes()  # the frame's one copy
                pos = end
                self._need = -1
                yield frame
        finally:
            del buf[:pos]

    @property
    def buffered(self) -> int:
        return len(self._buf)
