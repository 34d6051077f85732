"""Request and response headers, and which header version goes with which API version.

Rules (reference 1.3): a request uses header v2 when its API version is flexible, else v1; a
response uses header v1 when flexible, else v0 -- except ApiVersions responses, which always use
v0 so that a client that does not yet know the broker's versions can read them (KIP-511). The
request ClientId is always a classic int16-length string, even in header v2.
"""

from __future__ import annotations

import struct
from typing import Any

from . import primitives as p
from .codec import DECODE_FAILURES, encode_into, plan_for, read_from, top_plan
from .errors import DecodeError
from .schema import INT16, INT32, STRING, Array, field, message
from .spliced import Buffer, frame_parts, spliced_output

API_VERSIONS_KEY = 18
PRODUCE_KEY = 0
_API_KEY_VERSION_CORRELATION = struct.Struct(">hhi").unpack_from


@message(api_key=-1, kind="header", valid="1-2", flexible="2+")
class RequestHeader:
    request_api_key: int = field(INT16, "0+")
    request_api_version: int = field(INT16, "0+")
    correlation_id: int = field(INT32, "0+")
    client_id: str | None = field(STRING, "1+", nullable="1+", default="", flexible="none")


@message(api_key=-1, kind="header", valid="0-1", flexible="1+")
class ResponseHeader:
    correlation_id: int = field(INT32, "0+")


def request_header_version(api: Any, version: int) -> int:
    return 2 if version in api.flexible else 1


def response_header_version(api: Any, version: int) -> int:
    if api.key == API_VERSIONS_KEY:
        return 0
    return 1 if version in api.flexible else 0


def peek_api(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id) from the fixed start of any request header."""
    if len(frame) < 8:
        raise DecodeError(f"request of {len(frame)} bytes is too short for a header", offset=0,
                          api="RequestHeader", version=-1)
    return _API_KEY_VERSION_CORRELATION(frame)


def decode_request_header(frame: bytes, header_version: int) -> tuple[RequestHeader, p.Reader]:
    """Parse the header; the returned reader is positioned at the body."""
    r = p.Reader(frame)
    return read_from(RequestHeader, header_version, r), r


# (header read_at, body read_at) per request class and version: the broker's per-request path
_REQUEST_READERS: dict[type, dict[int, tuple[Any, Any]]] = {}


def _request_readers(api: Any, version: int) -> tuple[Any, Any]:
    read_body = top_plan(api.request, version).read_at
    if api.key == PRODUCE_KEY:  # its usual shape left in its frame (produce_scan.py)
        from .produce_scan import scanner  # (here: loading the Produce messages only for it)
        read_body = scanner(version, read_body)
    readers = (top_plan(RequestHeader, request_header_version(api, version)).read_at, read_body)
    _REQUEST_READERS.setdefault(api.request, {})[version] = readers
    return readers


def decode_request(api: Any, version: int, frame: bytes) -> tuple[RequestHeader, Any, int]:
    """(header, request, bytes left after the body) of a whole request frame (bytes, no size
    prefix) at an API version the caller has checked is valid.

    The same result as ``decode_request_header`` then ``read_from`` on its reader, in two calls
    of the generated code; anything wrong with the frame is left to those two, run again, so
    that the DecodeError raised is theirs exactly."""
    try:
        read_header, read_body = _REQUEST_READERS[api.request][version]
    except KeyError:
        read_header, read_body = _request_readers(api, version)
    end = len(frame)
    try:
        header, pos = read_header(frame, 0, end)
        request, pos = read_body(frame, pos, end)
        if pos <= end:
            return header, request, end - pos
    except (DecodeError, *DECODE_FAILURES):
        pass
    header, reader = decode_request_header(frame, request_header_version(api, version))
    request = read_from(api.request, version, reader)
    return header, request, reader.end - reader.pos


def encode_request(api: Any, version: int, correlation_id: int, client_id: str | None,
                   body: Any) -> bytes:
    """A whole size-prefixed request frame (used by the admin CLI and by tests)."""
    out = bytearray(4)
    header = RequestHeader(request_api_key=api.key, request_api_version=version,
                           correlation_id=correlation_id, client_id=client_id)
    encode_into(out, header, request_header_version(api, version))
    encode_into(out, body, version)
    out[0:4] = (len(out) - 4).to_bytes(4, "big", signed=True)
    return bytes(out)


# (the frame's first bytes before the correlation id is packed in, body writer) per response
# class and version; the header is the size, the correlation id and, in header v1, an empty
# tagged-field section
_RESPONSE_WRITERS: dict[type, dict[int, tuple[bytes, Any]]] = {}
_PACK_SIZE_CORRELATION = struct.Struct(">ii").pack_into
_PACK_SIZE = struct.Struct(">i").pack_into


def _response_writer(api: Any, version: int, cls: type) -> tuple[bytes, Any]:
    head = bytes(9 if response_header_version(api, version) >= 1 else 8)
    writer = (head, top_plan(cls, version).write)
    _RESPONSE_WRITERS.setdefault(cls, {})[version] = writer
    return writer


def warm(api: Any, version: int) -> None:
    """Compile now what ``decode_request`` and ``encode_response`` use for ``api`` at
    ``version`` (the server does it while idle, broker/warm.py), rather than at its first use."""
    if version not in _REQUEST_READERS.get(api.request, ()):
        _request_readers(api, version)
    if version not in _RESPONSE_WRITERS.get(api.response, ()):
        _response_writer(api, version, api.response)
        # a handler may answer with an array of the response already encoded (preencoded.py),
        # written by its element's own function
        plan = top_plan(api.response, version)
        for spec in plan.fields:
            if isinstance(spec.type, Array) and isinstance(spec.type.element, type):
                plan_for(spec.type.element, version, plan.flexible).write  # noqa: B018


def _writer_for(api: Any, version: int, body: Any) -> tuple[bytes, Any]:
    """The response header's bytes and the body's writer (one dict lookup once built), or the
    header and None where there is no writer: encode_into then says why."""
    try:
        return _RESPONSE_WRITERS[body.__class__][version]
    except KeyError:
        try:
            return _response_writer(api, version, body.__class__)
        except Exception:  # not a declared message, or no such version: let encode_into say so
            return bytes(9 if response_header_version(api, version) >= 1 else 8), None


def encode_response(api: Any, version: int, correlation_id: int, body: Any) -> bytearray:
    """A whole size-prefixed response frame (a bytearray: sockets take it without a copy)."""
    head, write = _writer_for(api, version, body)
    out = bytearray(head)
    _PACK_SIZE_CORRELATION(out, 0, 0, correlation_id)
    if write is None:
        encode_into(out, body, version)
    else:
        try:
            write(out, body)
        except Exception:
            # the writer's exceptions are turned into EncodeError by encode_into: run it
            del out[len(head):]
            encode_into(out, body, version)
    _PACK_SIZE(out, 0, len(out) - 4)
    return out


def encode_response_parts(api: Any, version: int, correlation_id: int,
                          body: Any) -> bytearray | list[Buffer]:
    """``encode_response`` for a response that may carry stored batches (``RecordsParts``,
    spliced.py): the frame as a list of buffers with the batches in it as they are, or one
    bytearray when it carries none. The header and the body's writer as ``encode_response``
    finds them (one dict lookup per response)."""
    head, write = _writer_for(api, version, body)
    out = spliced_output(len(head))  # (the head is zeros: size, correlation id, no tags)
    _PACK_SIZE_CORRELATION(out, 0, 0, correlation_id)
    if write is None:
        encode_into(out, body, version)
    else:
        try:
            write(out, body)
        except Exception:
            # the writer's exceptions are turned into EncodeError by encode_into: run it
            del out[len(head):]
            out.spliced, out.spliced_size = [], 0
            encode_into(out, body, version)
    _PACK_SIZE(out, 0, len(out) - 4 + out.spliced_size)
    if not out.spliced:
        return out
    return frame_parts(out)
