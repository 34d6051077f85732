"""A minimal Kafka wire client for trio tests: send one request, read its response.

It speaks through kafka-emu's own codec, so tests can drive the broker at any API version,
including versions and sequences no client library would send.
"""

from __future__ import annotations

import itertools
from typing import Any

import trio

from ..protocol.codec import read_from
from ..protocol.framing import FrameBuffer
from ..protocol.headers import ResponseHeader, encode_request, response_header_version
from ..protocol.primitives import Reader
from ..protocol.schema import Api


class WireClient:
    """One connection speaking the Kafka protocol through kafka-emu's codec: ``request`` sends
    a message at the version given and returns the decoded response; ``send``/``receive`` and
    ``send_raw`` split that up for pipelining and malformed input."""

    def __init__(self, stream: trio.abc.Stream, client_id: str = "wire-test") -> None:
        self.stream = stream
        self.client_id = client_id
        self._frames = FrameBuffer()
        self._ready: list[bytes] = []
        self._ids = itertools.count(1)

    @classmethod
    async def connect(cls, host: str, port: int, client_id: str = "wire-test") -> "WireClient":
        """Open a TCP connection to ``host:port``."""
        return cls(await trio.open_tcp_stream(host, port), client_id)

    async def send(self, api: Api, version: int, body: Any) -> int:
        """Send one request (header v1/v2 as the version needs); returns its correlation id."""
        correlation_id = next(self._ids)
        await self.stream.send_all(encode_request(api, version, correlation_id, self.client_id,
                                                  body))
        return correlation_id

    async def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (framing included): for malformed or hand-built frames."""
        await self.stream.send_all(data)

    async def receive_frame(self) -> bytes | None:
        """The next response frame, or None if the broker closed the connection."""
        while not self._ready:
            data = await self.stream.receive_some(1 << 16)
            if not data:
                return None
            self._ready.extend(self._frames.feed(bytes(data)))
        return self._ready.pop(0)

    async def receive(self, api: Api, version: int, correlation_id: int | None = None) -> Any:
        """The next response, decoded as ``api`` at ``version``; AssertionError if its
        correlation id is not ``correlation_id`` or bytes are left over."""
        frame = await self.receive_frame()
        if frame is None:
            raise ConnectionError("the broker closed the connection")
        r = Reader(frame)
        header = read_from(ResponseHeader, response_header_version(api, version), r)
        if correlation_id is not None and header.correlation_id != correlation_id:
            raise AssertionError(f"correlation id {header.correlation_id} != {correlation_id}")
        body = read_from(api.response, version, r)
        if r.pos != r.end:
            raise AssertionError(f"{r.end - r.pos} trailing bytes in {api.name} response")
        return body

    async def request(self, api: Api, version: int, body: Any) -> Any:
        """Send ``body`` as ``api`` v``version`` and return the decoded response."""
        correlation_id = await self.send(api, version, body)
        return await self.receive(api, version, correlation_id)

    async def aclose(self) -> None:
        """Close the connection."""
        await self.stream.aclose()
