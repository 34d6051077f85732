"""The HTTP/JSON control endpoint: every operation of the table as a small REST API.

Theory of operation. Hypercorn serves HTTP/1.1 (h11) in the emulator's own trio loop, so an
operation runs on the same thread as the broker and needs no locking, exactly as the Python
handle's calls do. The ASGI app below knows no operation by name: it routes on the table's paths
and methods, reads parameters from the path, the query string (GET) or a JSON object body
(POST, DELETE), checks them with ``operations.parse_params`` and runs the operation.

Answers are JSON: ``{"result": ...}`` with 200, or ``{"error": {"message", "operation"}}`` with
the operation's ControlError status (400 bad input, 404 unknown thing, 409 conflict), 404 for an
unknown path, 405 for a known path with another method, 400 for a body that is not a JSON
object, 413 for an oversized body, and 500 for an exception nobody expected -- which is also
recorded as the broker's unexpected error, so the test fixture that started the emulator fails.

Routing matches the raw (still percent-encoded) path segment by segment, so a group id with a
``/`` in it works when the client encodes it as ``%2F``.

``GET /openapi.json`` is the OpenAPI 3.1 document of the same table; ``GET /health`` says the
endpoint is up.

Before routing, ``access.Gate`` checks Host, Origin and the emulator's token (421, 403, 401), and
a body must be ``application/json`` (415) and well-formed, bounded JSON (400): see access.py for
why, and why ``/health`` alone needs no token.

Connections (connections.py): the listening socket is ours (backlog ``BACKLOG``, capped by the
kernel's somaxconn) and at most ``MAX_CONNECTIONS`` are served at once; one more is answered a
fixed 503 and closed, so a flood gets a clear refusal instead of silent drops.
"""

from __future__ import annotations

import enum
import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

import attrs
import trio

from .access import Gate, Refused, check_content_type, json_body, new_token, token_error
from .openapi import openapi, path_params
from .operations import ControlError, Operation, all_operations, parse_params

log = logging.getLogger("kafka_emu.control")


def _package_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("kafka-emu")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0"


__version__ = _package_version()
MAX_BODY_BYTES = 1 << 20
BACKLOG = 2048  # the kernel caps it at net.core.somaxconn (4096 on current Linux)
# served at once, idle keep-alive ones included (see connections.py); fewer would turn away a
# leaky client, more would let a flood fill the heap the broker's loop collects
MAX_CONNECTIONS = 512

Segments = tuple[str, ...]


@attrs.frozen
class ControlAddress:
    host: str
    port: int
    token: str = attrs.field(repr=False)  # send as ``Authorization: Bearer TOKEN``

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def to_json(value: Any) -> Any:
    """``value`` as plain JSON data: attrs instances become objects, enums their names, bytes
    hex; operations should return JSON data already, this only spares them the conversion."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value.name if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_json(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if attrs.has(type(value)):
        return {f.name: to_json(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    raise TypeError(f"{type(value).__name__} is not JSON data")


class _Reply(Exception):
    """A JSON answer decided before the operation ran (routing and body errors)."""

    def __init__(self, status: int, message: str, operation: str | None = None,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.operation = status, message, operation
        self.headers = headers or []


def _template(op: Operation) -> Segments:
    return tuple(op.path.strip("/").split("/"))


def _shape(template: Segments) -> Segments:
    """The template with its placeholders' names dropped: what routing can tell apart."""
    return tuple("{}" if s.startswith("{") else s for s in template)


class ControlApp:
    """ASGI app serving ``operations`` (all of the table by default) against ``broker``."""

    def __init__(self, broker: Any, operations: Mapping[str, Operation] | None = None,
                 gate: Gate | None = None) -> None:
        self.broker = broker
        self.gate = gate  # None: no access checks (only for an app no socket reaches)
        self.operations = dict(all_operations() if operations is None else operations)
        self.routes: list[tuple[Segments, Operation]] = []
        for op in self.operations.values():
            fields = {f.name for f in attrs.fields(op.params)}
            missing = [p for p in path_params(op) if p not in fields]
            if missing:
                raise RuntimeError(f"control operation {op.name}: path {op.path} names "
                                   f"{', '.join(missing)}, which {op.params.__name__} lacks")
            clash = next((other for template, other in self.routes
                          if other.method == op.method
                          and _shape(template) == _shape(_template(op))), None)
            if clash is not None:
                raise RuntimeError(f"control operations {clash.name} and {op.name} are both "
                                   f"{op.method} {op.path}")
            self.routes.append((_template(op), op))
        # where two templates match one path, the literal segment wins (/faults/summary over
        # /faults/{rule_id}), whatever order the operations were registered in
        self.routes.sort(key=lambda route: tuple(s.startswith("{") for s in route[0]))
        self._document: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        if self._document is None:  # the table does not change while serving
            self._document = openapi(self.operations.values(), version=__version__)
        return self._document

    # -- ASGI ------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        # websockets: not served; hypercorn answers the handshake with 500 and closes

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope, receive, send) -> None:
        method = scope["method"]
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        try:
            if self.gate is not None:
                self.gate.check(raw_path.split(b"?", 1)[0].decode("latin-1"), scope["headers"])
            status, body = await self._answer(method, raw_path, scope, receive)
            headers: list[tuple[bytes, bytes]] = []
        except Refused as refused:  # a stranger: say why, read and run nothing
            status, headers = refused.status, refused.headers
            body = {"error": {"message": refused.message, "operation": None}}
        except _Reply as reply:
            status, headers = reply.status, reply.headers
            body = {"error": {"message": reply.message, "operation": reply.operation}}
        except Exception as exc:  # noqa: BLE001 -- a bug here, not the client's: say so, go on
            log.exception("control endpoint failed on %s %r", method, raw_path)
            self.broker.record_unexpected(exc)
            status, headers = 500, []
            body = {"error": {"message": f"kafka-emu failed: {exc!r}", "operation": None}}
        # one line per answer: a shell running curl twice gets two lines, not one
        payload = json.dumps(body, separators=(",", ":")).encode() + b"\n"
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()), *headers]})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else payload})

    async def _answer(self, method: str, raw_path: bytes, scope, receive) -> tuple[int, Any]:
        path = raw_path.decode("latin-1").split("?", 1)[0]
        if path in ("/health", "/openapi.json"):
            if method not in ("GET", "HEAD"):
                raise _Reply(405, f"{path} answers GET only", headers=[(b"allow", b"GET")])
            if path == "/health":
                return 200, {"status": "up", "version": __version__}
            return 200, self.document()
        try:
            segments = tuple(unquote_to_bytes(s).decode("utf-8")
                             for s in raw_path.split(b"?", 1)[0].strip(b"/").split(b"/"))
        except UnicodeDecodeError:
            raise _Reply(400, f"{path} is not UTF-8 once percent-decoded") from None
        op, found = self._route(method, segments, path)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                          keep_blank_values=True)
        raw = await self._params(op, method, query, scope, receive)
        for name, value in found.items():
            if name in raw and raw[name] != value:
                raise _Reply(400, f"{name} is {value!r} in the path but {raw[name]!r} in the "
                                  f"request", op.name)
            raw[name] = value
        try:
            params = parse_params(op, raw)
        except ControlError as exc:
            raise _Reply(exc.status, exc.message, op.name) from None
        except RecursionError:  # a query value parse_params reads as JSON, nested too deep
            raise _Reply(400, "a parameter nests too deep", op.name) from None
        try:
            result = op.run(self.broker, params)
            if op.is_async:
                result = await result
            return 200, {"result": to_json(result)}
        except ControlError as exc:
            raise _Reply(exc.status, exc.message, op.name) from None
        except Exception as exc:  # noqa: BLE001 -- a bug in an operation, not the client's
            log.exception("control operation %s failed", op.name)
            self.broker.record_unexpected(exc)
            raise _Reply(500, f"kafka-emu failed running {op.name}: {exc!r}", op.name) from None

    def _route(self, method: str, segments: Segments, path: str) -> tuple[Operation, dict]:
        allowed = []
        for template, op in self.routes:
            found = _match(template, segments)
            if found is None:
                continue
            if op.method == method:
                return op, found
            allowed.append(op.method)
        if allowed:
            methods = ", ".join(sorted(set(allowed)))
            raise _Reply(405, f"{path} answers {methods}, not {method}",
                         headers=[(b"allow", methods.encode())])
        raise _Reply(404, f"no control operation at {path} (GET /openapi.json lists them)")

    async def _params(self, op: Operation, method: str, query: list[tuple[str, str]],
                      scope, receive) -> dict[str, Any]:
        body = await _read_body(receive, op)
        if body and self.gate is not None:
            try:
                check_content_type(scope["headers"])
            except Refused as refused:
                raise _Reply(refused.status, refused.message, op.name) from None
        if method == "GET":
            if body.strip():
                raise _Reply(400, f"{op.name} takes its parameters in the query string, "
                                  f"not a body", op.name)
            raw: dict[str, Any] = {}
            for key, value in query:
                if key in raw:  # repeated: a list (parse_params also splits "a,b")
                    previous = raw[key]
                    raw[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
                else:
                    raw[key] = value
            return raw
        if query:
            raise _Reply(400, f"{op.name} takes its parameters in a JSON body, not the query "
                              f"string", op.name)
        if not body.strip():
            return {}
        try:
            data = json_body(body)
        except ValueError as exc:
            raise _Reply(400, str(exc), op.name) from None
        if not isinstance(data, dict):
            raise _Reply(400, f"the body must be a JSON object, got {type(data).__name__}",
                         op.name)
        return data


def _match(template: Segments, segments: Segments) -> dict[str, str] | None:
    if len(template) != len(segments):
        return None
    found = {}
    for pattern, segment in zip(template, segments):
        if pattern.startswith("{") and pattern.endswith("}"):
            if not segment:
                return None
            found[pattern[1:-1]] = segment
        elif pattern != segment:
            return None
    return found


async def _read_body(receive, op: Operation) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Reply(400, "the client went away before sending the body", op.name)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _Reply(413, f"the body is over {MAX_BODY_BYTES} bytes", op.name)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def serve_control(broker: Any, host: str = "127.0.0.1", port: int = 0, *,
                        token: str | None = None,
                        operations: Mapping[str, Operation] | None = None,
                        max_connections: int = MAX_CONNECTIONS,
                        task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve the control endpoint for ``broker`` until cancelled; reports a ControlAddress.

    Start it in the emulator's trio loop: ``await nursery.start(serve_control, broker, host,
    port)``; port 0 picks a free port. ``token`` is the one clients must send (a new random
    one when None; ValueError if it cannot travel in a header)."""
    from .connections import listen, serve_limited

    token = new_token() if token is None else token
    problem = token_error(token)
    if problem is not None:
        raise ValueError(problem)
    listener = await listen(host, port, BACKLOG)
    bound_port = listener.socket.getsockname()[1]
    address = ControlAddress(host, bound_port, token)
    app = ControlApp(broker, operations, Gate(host, bound_port, token))
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_limited, app, listener, max_connections)
        log.info("kafka-emu control endpoint on %s", address.url)
        task_status.started(address)
