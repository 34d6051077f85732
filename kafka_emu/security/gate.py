"""The connection's one authentication hook: who a new connection on a non-default listener
is, and whether its requests pass through a SASL authenticator first (sasl.py)."""

from __future__ import annotations


def open_gate(broker, conn, info, listener, principal: str | None) -> None:
    info.listener = listener.name
    if principal is not None:
        info.principal = principal
    if listener.sasl:
        from .sasl import SaslAuthenticator
        conn.auth = SaslAuthenticator(broker, listener.name)
