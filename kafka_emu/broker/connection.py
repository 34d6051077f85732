"""One client connection: frames in, one request at a time, responses out in order.

Kafka mutes a connection after reading a request until it has answered it, so requests on one
connection are processed strictly in order and a parked JoinGroup/SyncGroup holds back the
ones behind it -- but never another connection's (reference 1.3). We get that for free by
awaiting each handler before reading the next frame.

Bad input: a frame that does not parse, an unknown API key, an unsupported version (other than
ApiVersions) or a frame above socket.request.max.bytes closes this connection with one log
line naming the peer and the reason. The server and other connections carry on.
"""

from __future__ import annotations

import logging

import trio

from ..protocol.codec import read_from
from ..protocol.errors import DecodeError
from ..protocol.framing import FrameBuffer
from ..protocol.headers import (decode_request_header, encode_response, peek_api,
                                request_header_version)
from .clock import stopwatch
from .context import ConnectionInfo, RequestContext
from .events import ConnectionClosed, RequestHandled
from .handlers import HANDLERS
from .handlers.api_versions import unsupported_version_response
from .state import Broker

log = logging.getLogger("kafka_emu")

API_VERSIONS = 18


class CloseConnection(Exception):
    """The request cannot be served; Kafka closes the connection without a response."""


def _address(sockaddr) -> tuple[str, int]:
    if isinstance(sockaddr, tuple) and len(sockaddr) >= 2:
        return str(sockaddr[0]), int(sockaddr[1])
    return str(sockaddr), 0


async def serve_connection(broker: Broker, stream: trio.SocketStream) -> None:
    peer_host, peer_port = _address(stream.socket.getpeername())
    local_host, local_port = _address(stream.socket.getsockname())
    conn = ConnectionInfo(peer_host, peer_port, local_host, local_port)
    frames = FrameBuffer(broker.config.socket_request_max_bytes)
    reason = "closed by peer"
    try:
        while True:
            data = await stream.receive_some(1 << 16)
            if not data:
                break
            for frame in frames.feed(data):
                response = await _process(broker, conn, frame)
                if response is not None:
                    await stream.send_all(response)
    except (DecodeError, CloseConnection) as exc:
        reason = str(exc)
        log.warning("closing connection from %s: %s", conn.peer, reason)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError) as exc:
        reason = f"connection lost: {exc!r}"
    except Exception as exc:  # a bug: keep serving others, but make it visible
        reason = f"internal error: {exc!r}"
        log.exception("internal error serving %s; closing that connection", conn.peer)
        broker.record_unexpected(exc)
    finally:
        if broker.observer is not None:
            broker.observer(ConnectionClosed(at_ms=broker.now_ms(), peer=conn.peer,
                                             reason=reason))
        with trio.CancelScope(shield=True):
            await stream.aclose()


async def _process(broker: Broker, conn: ConnectionInfo, frame: bytes) -> bytearray | None:
    elapsed_ms = stopwatch() if broker.observer is not None else None
    api_key, version, correlation_id = peek_api(frame)
    handler = HANDLERS.get(api_key)
    if handler is None:
        raise CloseConnection(f"unknown api key {api_key}")
    api = handler.api
    supported = broker.advertised.get(api_key)
    if supported is None or version not in supported:
        if api_key == API_VERSIONS:
            # KIP-511: answer in v0 with UNSUPPORTED_VERSION and our ApiVersions range, unparsed.
            return encode_response(api, 0, correlation_id,
                                   unsupported_version_response(broker))
        raise CloseConnection(f"unsupported {api.name} version {version} "
                              f"(supported {supported or 'none'})")
    header, reader = decode_request_header(frame, request_header_version(api, version))
    request = read_from(api.request, version, reader)
    if reader.pos != reader.end:
        # Kafka's request parser ignores bytes after the body, and real clients rely on it:
        # librdkafka 2.16 sends Metadata v13 with three extra bytes (list_topics()).
        log.debug("%s: ignoring %d bytes after %s v%d", conn.peer, reader.end - reader.pos,
                  api.name, version)
    ctx = RequestContext(broker=broker, api=api, version=version, correlation_id=correlation_id,
                         client_id=header.client_id or "", connection=conn,
                         request_id=broker.new_request_id())
    response = await handler.fn(ctx, request)
    if broker.observer is not None:
        broker.observer(RequestHandled(
            at_ms=broker.now_ms(), api=api.name, version=version, client_id=header.client_id,
            client_software_name=conn.client_software_name,
            client_software_version=conn.client_software_version, peer=conn.peer,
            latency_ms=elapsed_ms(),
            error_code=getattr(response, "error_code", None)))
    if response is None:
        return None
    return encode_response(api, version, correlation_id, response)

