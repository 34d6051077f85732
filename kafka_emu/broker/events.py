"""Structured events the server emits, beside the coordinator's own events.

One observer callable receives both kinds. It is None by default, and the server checks for
that before building any event, so observation costs nothing when off.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class RequestHandled:
    at_ms: int
    api: str
    version: int
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    peer: str
    latency_ms: float
    error_code: int | None  # the response's top-level error code, where it has one


@attrs.frozen(kw_only=True)
class ConnectionClosed:
    at_ms: int
    peer: str
    reason: str
