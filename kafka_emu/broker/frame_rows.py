"""RequestHandled rows from ``REQUEST_FRAME`` records (``event_rows.py``): the request's frame and
the response's, decoded by the codec that read and wrote them, made into the row by the same
compiled function the request path uses. The trace's encoder process calls this for every such
record, so what two frames decode to is kept (a bounded table) by their bytes less the
correlation ids: a member's Heartbeats differ in nothing else.
"""

from __future__ import annotations

from ..protocol.codec import read_from
from ..protocol.headers import ResponseHeader, decode_request, peek_api, response_header_version
from ..protocol.primitives import Reader
from .clock import ms_from
from .handlers import HANDLERS
from .event_rows import NO_TOPIC_IDS, request_row_maker

# (api key, version, request frame after its correlation id, response frame after its) -> decoded
_DECODED: dict[tuple[int, int, bytes, bytes], tuple] = {}
_DECODED_LIMIT = 4096


def frame_row(event: tuple) -> tuple:
    """The RequestHandled row of a ``REQUEST_FRAME`` record."""
    (_, frame, answer, started, done, at, connection, peer, software, software_version) = event
    key, version, correlation = peek_api(frame)
    cache_key = (key, version, frame[8:], bytes(answer[8:]))  # (a bytearray in this process)
    decoded = _DECODED.get(cache_key)
    if decoded is None:
        decoded = _decode(key, version, frame, answer)
        if len(_DECODED) >= _DECODED_LIMIT:
            _DECODED.clear()
        _DECODED[cache_key] = decoded
    make, name, client, q, r = decoded
    return make(q, r, (done - started) * 1000, NO_TOPIC_IDS,
                at if type(at) is int else ms_from(at, done),
                connection, peer, name, key, version, correlation, client, software,
                software_version)


def _decode(key: int, version: int, frame: bytes, answer: bytes) -> tuple:
    """(row maker, api name, client id, request, response) of a request frame and its
    size-prefixed answer."""
    api = HANDLERS[key].api
    header, request, _ = decode_request(api, version, bytes(frame))
    reader = Reader(bytes(answer), 4)  # (after the size)
    read_from(ResponseHeader, response_header_version(api, version), reader)
    response = read_from(api.response, version, reader)
    return (request_row_maker(type(request), type(response)), api.name, header.client_id,
            request, response)
