"""One synchronous connection to one broker, with API version negotiation (KIP-35, KIP-511).

A :class:`BrokerConnection` is a TCP socket with a correlation-id counter and a timeout. Opening
it sends ApiVersions (v3 first, with client software name and version, KIP-511); a broker that
does not know that version answers a v0 body with UNSUPPORTED_VERSION and its own ApiVersions
range, and we retry once, on the same connection, at the best version of that range (v0 when
the broker does not say). The broker's ranges are kept, and every later ``request(api, build)``
uses the highest version both sides support and hands it to ``build`` so the body can fill
version-specific fields. Response headers follow ``response_header_version`` (ApiVersions
responses always use header v0). Whatever goes wrong is one :class:`AdminError`, one line.
"""

from __future__ import annotations

import itertools
import re
import socket
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..errors import ErrorCode
from ..protocol import APIS, BY_NAME, DecodeError, EncodeError
from ..protocol import primitives as p
from ..protocol.codec import read_from
from ..protocol.framing import DEFAULT_MAX_FRAME
from ..protocol.headers import ResponseHeader, encode_request, response_header_version
from ..protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from ..protocol.schema import Api
from ..protocol.versions import Versions
from .model import usable_version

DEFAULT_TIMEOUT = 10.0
DEFAULT_CLIENT_ID = "kafka-emu-admin"
SOFTWARE_NAME = "kafka-emu"
FIRST_API_VERSIONS_VERSION = 3
API_VERSIONS = BY_NAME["ApiVersions"]
# KIP-511: brokers reject software names/versions outside this pattern with INVALID_REQUEST.
_SOFTWARE_TEXT = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


class AdminError(Exception):
    """Anything that stops an admin operation; ``str()`` is one line for stderr."""


class UnsupportedApiError(AdminError):
    pass


class BrokerError(AdminError):
    def __init__(self, code: int, what: str, message: str | None = None) -> None:
        self.code = code
        try:
            name = ErrorCode(code).name
        except ValueError:
            name = f"error {code}"
        super().__init__(f"{what}: {name}" + (f" ({message})" if message else ""))


def software_version() -> str:
    text = re.sub(r"[^a-zA-Z0-9\-.]", "-", __version__).strip("-.")
    return text if _SOFTWARE_TEXT.fullmatch(text) else "unknown"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def parse_bootstrap(text: str) -> list[tuple[str, int]]:
    """``HOST:PORT[,HOST:PORT...]`` (``[::1]:9092`` for IPv6); ValueError if malformed."""
    servers = []
    for item in text.split(","):
        item = item.strip()
        host, sep, port_text = item.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"expected HOST:PORT, got {item!r}")
        servers.append((host, int(port_text)))
    return servers


def resolve_api(api: str | int | Api) -> Api:
    if isinstance(api, Api):
        return api
    found = BY_NAME.get(api) if isinstance(api, str) else APIS.get(api)
    if found is None:
        raise AdminError(f"kafka-emu does not declare API {api!r}")
    return found


class BrokerConnection:
    """One connection to one broker, with the broker's API version ranges."""

    def __init__(self, host: str, port: int, *, timeout: float = DEFAULT_TIMEOUT,
                 client_id: str = DEFAULT_CLIENT_ID,
                 api_versions_version: int = FIRST_API_VERSIONS_VERSION) -> None:
        self.host, self.port, self.timeout, self.client_id = host, port, timeout, client_id
        self._correlation = itertools.count(1)
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except socket.gaierror as exc:
            raise AdminError(f"cannot resolve {host!r}: {exc.strerror or exc}") from None
        except OSError as exc:
            raise AdminError(f"cannot connect to {self.address}: {_reason(exc)}") from None
        try:
            self.broker_versions, self.api_versions_version = self._handshake(
                api_versions_version)
        except BaseException:
            self.close()
            raise

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "BrokerConnection":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- versions ---------------------------------------------------------------------------
    def version_for(self, api: str | int | Api) -> int:
        """The highest version of ``api`` both sides support; UnsupportedApiError if none."""
        api = resolve_api(api)
        theirs = self.broker_versions.get(api.key)
        version = usable_version(api.valid, theirs)
        if version is None:
            broker = f"supports v{theirs}" if theirs is not None else "does not support it"
            raise UnsupportedApiError(f"{api.name}: broker {self.address} {broker}, "
                                      f"kafka-emu supports v{api.valid}")
        return version

    def supports(self, api: str | int | Api) -> bool:
        api = resolve_api(api)
        return usable_version(api.valid, self.broker_versions.get(api.key)) is not None

    def request(self, api: str | int | Api, build: Callable[[int], Any] | Any) -> tuple[int, Any]:
        """Send at the best common version; ``build(version)`` (or a message) is the body."""
        api = resolve_api(api)
        version = self.version_for(api)
        body = build(version) if callable(build) else build
        return version, self.send(api, version, body)

    def send(self, api: Api, version: int, body: Any) -> Any:
        """Send at exactly ``version`` (no negotiation) and decode the response."""
        data = self._roundtrip(api, version, body)
        return self._decode(api.response, version, data)

    # -- wire -------------------------------------------------------------------------------
    def _handshake(self, version: int) -> tuple[dict[int, Versions], int]:
        version = min(version, API_VERSIONS.valid.hi)
        while True:
            body = ApiVersionsRequest(client_software_name=SOFTWARE_NAME,
                                      client_software_version=software_version())
            data = self._roundtrip(API_VERSIONS, version, body)
            error = p.read_int16(p.Reader(data)) if len(data) >= 2 else None
            if error == ErrorCode.UNSUPPORTED_VERSION:
                # The broker answers at v0 with (at least) its own ApiVersions range.
                response = self._decode(ApiVersionsResponse, 0, data)
                theirs = {k.api_key: Versions(k.min_version, k.max_version)
                          for k in response.api_keys}.get(API_VERSIONS.key)
                retry = usable_version(API_VERSIONS.valid, theirs)
                retry = 0 if retry is None else retry
                if retry >= version:
                    raise AdminError(f"broker {self.address} refuses ApiVersions v{version} "
                                     f"but advertises v{theirs}")
                version = retry
                continue
            response = self._decode(ApiVersionsResponse, version, data)
            if response.error_code != ErrorCode.NONE:
                raise BrokerError(response.error_code, f"ApiVersions v{version} at {self.address}")
            ranges = {k.api_key: Versions(k.min_version, k.max_version) for k in response.api_keys}
            return ranges, version

    def _roundtrip(self, api: Api, version: int, body: Any) -> bytes:
        """Send one request; the response body bytes (header checked and stripped)."""
        correlation_id = next(self._correlation) & 0x7FFFFFFF
        try:
            frame = encode_request(api, version, correlation_id, self.client_id, body)
        except EncodeError as exc:
            raise AdminError(f"cannot encode {api.name} v{version}: {exc}") from None
        what = f"{api.name} v{version} at {self.address}"
        try:
            self._sock.sendall(frame)
            prefix = self._recv_exact(4, what)
            size = int.from_bytes(prefix, "big", signed=True)
            if not 0 <= size <= DEFAULT_MAX_FRAME:
                raise AdminError(self._not_kafka(prefix))
            data = self._recv_exact(size, what)
        except TimeoutError:
            raise AdminError(f"{what}: no response within {self.timeout:g}s") from None
        except OSError as exc:
            raise AdminError(f"{what}: {_reason(exc)}") from None
        r = p.Reader(data)
        try:
            header = read_from(ResponseHeader, response_header_version(api, version), r)
        except DecodeError as exc:
            raise AdminError(f"{what}: bad response header: {exc}") from None
        if header.correlation_id != correlation_id:
            raise AdminError(f"{what}: correlation id {header.correlation_id}, "
                             f"expected {correlation_id}")
        return data[r.pos:]

    def _not_kafka(self, prefix: bytes) -> str:
        """One line for a peer whose answer cannot be a Kafka frame (its length prefix is out
        of range): most often another service on that port, e.g. an HTTP server, which we name
        by the text it sent."""
        self._sock.settimeout(min(self.timeout, 0.2))
        try:
            prefix += self._sock.recv(200)
        except OSError:
            pass
        first_line = prefix.split(b"\r\n", 1)[0].split(b"\n", 1)[0][:60]
        text = first_line.decode("ascii", "replace")
        if first_line and text.isprintable():
            http = first_line.startswith(b"HTTP/") or first_line.lower().startswith(
                (b"<!doctype html", b"<html"))
            kind = "an HTTP server" if http else "a text protocol"
            return (f"{self.address} is not a Kafka broker: it answered like {kind} "
                    f"({text!r})")
        return (f"{self.address} is not a Kafka broker: its answer starts with "
                f"{prefix[:8].hex(' ')}, not a Kafka frame")

    def _recv_exact(self, n: int, what: str) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                raise AdminError(f"{what}: broker closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _decode(self, cls: type, version: int, data: bytes) -> Any:
        r = p.Reader(data)
        try:
            msg = read_from(cls, version, r)
            if r.pos != r.end:
                raise DecodeError(f"{r.end - r.pos} trailing bytes", offset=r.pos)
        except DecodeError as exc:
            raise AdminError(f"cannot parse the response from {self.address}: {exc}") from None
        return msg
