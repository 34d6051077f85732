"""Small helpers shared by handlers: this broker's address as clients should see it."""

from __future__ import annotations

from ..context import RequestContext


def advertised_endpoint(ctx: RequestContext) -> tuple[str, int]:
    """(host, port) to hand to clients: configured, else the address they reached us on."""
    cfg = ctx.broker.config
    host = cfg.advertised_host or ctx.connection.local_host
    port = cfg.advertised_port or ctx.broker.bound_port
    return host, port


def java_host(host: str) -> str:
    """Kafka reports a member's ClientHost as Java's InetAddress.toString(): "/127.0.0.1"."""
    return "/" + host
