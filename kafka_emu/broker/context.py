"""What a handler knows about the request it serves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ..protocol.schema import Api
from .group_routing import route
from .state import Broker


@attrs.define
class ConnectionInfo:
    peer_host: str
    peer_port: int
    local_host: str
    local_port: int
    client_software_name: str | None = None
    client_software_version: str | None = None
    node_id: int | None = None  # the broker of the cluster it reached (None: the first)
    # Who the connection authenticated as (Kafka's KafkaPrincipal as "type:name"): ANONYMOUS on
    # a PLAINTEXT listener, set by SASL or a client certificate (kafka_emu/security/)
    principal: str = "User:ANONYMOUS"
    listener: str = "PLAINTEXT"  # the name of the listener it came in on
    # Waits for a parked request unless the client goes first (connection_io.Connection.park);
    # None for requests that do not come from a socket (tests driving handlers directly).
    park: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]] | None = attrs.field(
        default=None, eq=False, repr=False)
    # (connection id, peer, client software name and version) as one tuple, for the request
    # path's records by frame (event_rows.REQUEST_FRAME): made on first use (dispatch.py), set
    # back to None by whatever sets the software (ApiVersions). (Not by an attrs on_setattr
    # hook: that gives the class a Python __setattr__, and every store of __init__ goes
    # through it: a connection's opening about 40% slower.)
    trace_identity: tuple | None = attrs.field(default=None, init=False, eq=False, repr=False)

    @property
    def peer(self) -> str:
        return f"{self.peer_host}:{self.peer_port}"


@attrs.define
class RequestContext:
    broker: Broker
    api: Api
    version: int
    correlation_id: int
    client_id: str
    connection: ConnectionInfo
    request_id: int
    # the connection takes a parked request back (its Pending) rather than waiting in the handler;
    # False where something must still run after the handler (a fault rule's action)
    deferrable: bool = False

    async def submit(self, command: Any, render, *, defer: bool = False) -> Any:
        """Hand a command to the coordinator; wait if it parks; return the rendered reply.

        With ``defer`` (a handler that returns this reply as it is: JoinGroup, SyncGroup) a
        parked request comes back as its ``Pending`` for the connection to wait on, when the
        connection can (``deferrable``)."""
        broker = self.broker
        if broker.cluster.multi:  # only the group's coordinator serves it (group_routing.py)
            command, render, answer = route(self, command, render)
            if command is None:
                return answer
        pending = broker.submit(command, render)
        if not pending.resolved:
            if defer and self.deferrable:
                pending.request_id = command.request_id
                return pending  # the connection waits for it (Pending's doc)
            return await self.wait_for(pending, command.request_id)
        return pending.response

    async def wait_for(self, pending: Any, request_id: int) -> Any:
        """The rest of ``submit`` for a command the coordinator parked (``broker.submit`` gave
        back an unresolved Pending): wait for its rendered reply, released early if the client
        closes its connection."""
        try:
            park = self.connection.park
            await (pending.done.wait() if park is None else park(pending))
        finally:
            if not pending.resolved:
                self.broker.forget(request_id)
        return pending.response

    async def park(self, wait: Callable[[], Awaitable[Any]]) -> Any:
        """Await ``wait()``, released early (PeerGone) if the client closes its connection."""
        park = self.connection.park
        return await (wait() if park is None else park(wait))

    def now_ms(self) -> int:
        return self.broker.now_ms()
