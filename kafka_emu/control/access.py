"""Who may drive the control endpoint, and what a request body may be.

Theory of operation. The endpoint changes an emulator's time, faults, groups and offsets, and it
listens on loopback, where every web page a developer has open can reach it too: a browser sends
a cross-origin "simple request" (GET, or a POST with ``text/plain`` and no custom header) without
asking first. Four checks, in this order, close that door; each refuses before anything runs:

1. ``Host`` must name the endpoint's own address (421 Misdirected Request otherwise). A page that
   rebinds its own DNS name to 127.0.0.1 still sends its own name as Host, so it cannot read
   answers through a same-origin request (DNS rebinding).
2. ``Origin``, when sent, must be the endpoint's own origin (403). Browsers send it on every
   cross-origin POST, and never let a page forge it.
3. ``Authorization: Bearer TOKEN`` with the emulator's token (401, compared in constant time).
   A page cannot add that header without a CORS preflight, which the endpoint never grants
   (an OPTIONS request is refused like any other stranger's). The token also keeps out other
   local users and processes that did not start the emulator.
4. A request with a body must say ``Content-Type: application/json`` (415): no ``text/plain``
   or form body is ever read as JSON.

``GET /health`` needs no token: a script waiting for the emulator to come up polls it before it
has read the token, and it changes nothing and tells nothing but "up" and the version. Every
other route needs the token, ``/openapi.json`` included: one open route is easier to reason
about than a list, and the clients (``kafka-emu ctl``, the fixtures) hold the token anyway.

Bodies are parsed by ``json_body``: strict UTF-8, no NaN/Infinity, no duplicate keys, nesting at
most ``MAX_JSON_DEPTH`` deep -- so the parser, ``parse_params`` and the answer's encoder never
recurse far, and every malformed body is a 400, never a 500.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import socket
from collections.abc import Iterable
from typing import Any

ENV_TOKEN = "KAFKA_EMU_CONTROL_TOKEN"
MAX_JSON_DEPTH = 32  # the deepest parameter of the table (a fault's match) is 3 levels
MAX_TOKEN_LENGTH = 256
OPEN_PATHS = frozenset({"/health"})


class Refused(Exception):
    """A request refused before routing: the status, the message, extra headers."""

    def __init__(self, status: int, message: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or []


def new_token() -> str:
    # hex, not url-safe base64: a token starting with "-" would read as a flag in
    # `kafka-emu ctl --control-token TOKEN` (argparse), and in many shells' scripts
    return secrets.token_hex(24)


def token_error(token: str) -> str | None:
    """Why ``token`` cannot be a control token (it travels in an HTTP header), or None."""
    if not token:
        return "the control token is empty"
    if len(token) > MAX_TOKEN_LENGTH:
        return f"the control token is over {MAX_TOKEN_LENGTH} characters"
    if not all("!" <= c <= "~" for c in token):
        return "the control token must be printable ASCII without spaces"
    return None


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class Gate:
    """The four checks for one endpoint bound at ``host``:``port`` with ``token``."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.port = port
        self.token = token.encode("ascii")
        names = {host.lower()}
        if _loopback(host) or _unspecified(host):
            names |= {"127.0.0.1", "localhost", "::1"}
        if _unspecified(host):  # 0.0.0.0 / ::: the machine's own names, any address literal
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.names = frozenset(names)
        self.any_literal = _unspecified(host)

    def _host_allowed(self, value: str) -> bool:
        name, port = _split_host(value)
        if name is None or port != self.port:
            return False
        return name in self.names or (self.any_literal and _ip_literal(name))

    def check(self, path: str, headers: Iterable[tuple[bytes, bytes]]) -> None:
        """Raise Refused unless the request may go on to routing."""
        seen: dict[bytes, list[bytes]] = {}
        for name, value in headers:
            seen.setdefault(name.lower(), []).append(value)
        hosts = seen.get(b"host", [])
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else ""
        if not self._host_allowed(host):
            raise Refused(421, f"Host {host!r} is not this control endpoint's address "
                               f"(use 127.0.0.1:{self.port} or localhost:{self.port})")
        origins = seen.get(b"origin", [])
        if origins:
            origin = origins[0].decode("latin-1")
            scheme, _, rest = origin.partition("://")
            if len(origins) > 1 or scheme.lower() != "http" or not self._host_allowed(rest):
                raise Refused(403, f"requests from web pages are refused (Origin {origin!r})")
        if path in OPEN_PATHS:
            return
        offered = seen.get(b"authorization", [])
        scheme, _, credentials = (offered[0] if len(offered) == 1 else b"").partition(b" ")
        challenge = [(b"www-authenticate", b'Bearer realm="kafka-emu control"')]
        if not offered or scheme.lower() != b"bearer":
            raise Refused(401, "this control endpoint needs its token: send 'Authorization: "
                               "Bearer TOKEN' (kafka-emu serve prints it as control-token; "
                               "emu.control_token in Python)", challenge)
        if not hmac.compare_digest(credentials.strip(), self.token):
            raise Refused(401, "the token sent is not this control endpoint's token",
                          challenge)


def _split_host(value: str) -> tuple[str | None, int | None]:
    """("127.0.0.1", 9093) from "127.0.0.1:9093", ("::1", 9093) from "[::1]:9093"."""
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        if not sep or not rest.startswith(":"):
            return None, None
        port_text = rest[1:]
    else:
        name, sep, port_text = value.rpartition(":")
        if not sep or ":" in name:
            return None, None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None, None
    return name.lower(), int(port_text)


def check_content_type(headers: Iterable[tuple[bytes, bytes]]) -> None:
    """Raise Refused (415) unless the request says its body is JSON in UTF-8."""
    found = [v for n, v in headers if n.lower() == b"content-type"]
    value = found[0].decode("latin-1") if len(found) == 1 else ""
    media, *params = [p.strip().lower() for p in value.split(";")]
    charsets = {v.strip().strip('"') for k, _, v in (p.partition("=") for p in params)
                if k.strip() == "charset"}
    if media != "application/json" or not charsets <= {"utf-8"}:
        raise Refused(415, f"a request body must be JSON: send 'Content-Type: "
                           f"application/json', not {value!r}")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


def json_body(body: bytes) -> Any:
    """The JSON value of ``body``; ValueError (its message for the client) if it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the body is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constants,
                           object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise ValueError(f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, and int() over the digit limit
        raise ValueError(f"the body is not JSON: {exc}") from None
    if _depth_over(value, MAX_JSON_DEPTH):
        raise ValueError(f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` arrays/objects deep (without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))
    return False
