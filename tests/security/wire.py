"""A hand-built encoder for the SASL exchange: struct.pack frames, independent of kafka-emu's
codec (request header v1, and v2 for SaslAuthenticate v2)."""

from __future__ import annotations

import struct

import trio


def _string(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def request(api_key: int, version: int, correlation_id: int, body: bytes,
            flexible: bool = False) -> bytes:
    header = struct.pack(">hhi", api_key, version, correlation_id) + _string("sasl-wire")
    if flexible:
        header += b"\x00"  # no tagged fields
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def handshake(version: int, mechanism: str, correlation_id: int = 1) -> bytes:
    return request(17, version, correlation_id, _string(mechanism))


def authenticate(version: int, token: bytes, correlation_id: int = 2) -> bytes:
    if version >= 2:  # compact bytes: uvarint length + 1
        n = len(token) + 1
        size = bytearray()
        while True:
            if n < 0x80:
                size.append(n)
                break
            size.append((n & 0x7F) | 0x80)
            n >>= 7
        return request(36, version, correlation_id, bytes(size) + token + b"\x00", True)
    return request(36, version, correlation_id, struct.pack(">i", len(token)) + token)


def metadata_v1(correlation_id: int = 3) -> bytes:
    return request(3, 1, correlation_id, struct.pack(">i", -1))


def api_versions_v0(correlation_id: int = 4) -> bytes:
    return request(18, 0, correlation_id, b"")


class Conn:
    def __init__(self, stream) -> None:
        self.stream = stream
        self.buffer = b""

    @classmethod
    async def open(cls, port: int, host: str = "127.0.0.1") -> "Conn":
        return cls(await trio.open_tcp_stream(host, port))

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def frame(self) -> bytes | None:
        """The next size-prefixed frame (without its size), or None at end of stream."""
        while True:
            if len(self.buffer) >= 4:
                (size,) = struct.unpack_from(">i", self.buffer)
                if len(self.buffer) >= 4 + size:
                    data, self.buffer = self.buffer[4:4 + size], self.buffer[4 + size:]
                    return data
            try:
                more = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                more = b""
            if not more:
                return None
            self.buffer += more

    async def closed(self) -> bool:
        return await self.frame() is None


def parse_handshake(frame: bytes) -> tuple[int, int, list[str]]:
    """(correlation id, error code, mechanisms) of a SaslHandshake v0/v1 response."""
    correlation_id, error, count = struct.unpack_from(">ihi", frame)
    pos, names = 10, []
    for _ in range(count):
        (n,) = struct.unpack_from(">h", frame, pos)
        names.append(frame[pos + 2:pos + 2 + n].decode())
        pos += 2 + n
    assert pos == len(frame)
    return correlation_id, error, names


def parse_authenticate(frame: bytes, version: int) -> tuple[int, int, str | None, bytes, int]:
    """(correlation id, error code, message, auth bytes, session lifetime ms); v0-1 only."""
    assert version < 2
    correlation_id, error, n = struct.unpack_from(">ihh", frame)
    pos = 8
    message = None
    if n >= 0:
        message = frame[pos:pos + n].decode()
        pos += n
    (size,) = struct.unpack_from(">i", frame, pos)
    token = frame[pos + 4:pos + 4 + size]
    pos += 4 + size
    lifetime = 0
    if version >= 1:
        (lifetime,) = struct.unpack_from(">q", frame, pos)
        pos += 8
    assert pos == len(frame), (pos, len(frame))
    return correlation_id, error, message, token, lifetime
