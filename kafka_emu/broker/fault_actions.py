"""A fault rule's action carried out on one request (control/faults.py describes the rules).

The connection loop calls ``carry_out`` only for a request a rule matched, so the plain request
path never passes through here. Closing "before" the request is applied raises ``FaultClose``,
which the connection loop turns into a closed connection with the rule named in the reason.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import attrs
import trio

from ..errors import KafkaError
from ..protocol.schema import fields_of
from .context import RequestContext
from .error_response import error_response
from .event_rows import request_identity
from .throttle import client_throttles

if TYPE_CHECKING:
    from .connection import Connection
    from .state import Broker


class FaultClose(Exception):
    """A control-plane fault rule closes this connection (close_before / close_after)."""


async def run_handler(handler, ctx: RequestContext, request):
    """The handler's response, or the error response for a KafkaError it raised."""
    try:
        return await handler.fn(ctx, request)
    except KafkaError as exc:
        return error_response(ctx.api, ctx.version, request, exc.code, exc.message)


async def carry_out(broker: Broker, conn: Connection, ctx: RequestContext, handler, request,
                   fault):
    """Carry out a fault rule's action on one request (control/faults.py describes them)."""
    action = fault.action
    emit = broker.observer
    if emit is not None:
        from .events import FaultFired
        group, member, _, _ = request_identity(request)
        emit(FaultFired(at_ms=broker.now_ms(), rule_id=fault.rule_id, action=action,
                        connection_id=conn.id, peer=ctx.connection.peer, api=ctx.api.name,
                        version=ctx.version, correlation_id=ctx.correlation_id,
                        client_id=ctx.client_id, group_id=group, member_id=member,
                        error_code=int(fault.error_code) if action == "error" else None,
                        delay_ms=fault.delay_ms if action in ("delay", "throttle") else None))
    if action == "error":
        return error_response(ctx.api, ctx.version, request, fault.error_code, fault.message)
    if action == "close_before":
        raise FaultClose(f"closed by fault rule {fault.rule_id} before {ctx.api.name} "
                         "was applied")
    if action == "blackhole":
        await conn.park(trio.sleep_forever)  # raises PeerGone once the client gives up
    if action == "delay":
        await conn.park(partial(trio.sleep, fault.delay_ms / 1000))
    response = await run_handler(handler, ctx, request)
    if action == "throttle" and response is not None:
        if any(s.name == "throttle_time_ms" and ctx.version in s.versions
               for s in fields_of(type(response))):
            response = attrs.evolve(response, throttle_time_ms=fault.delay_ms)
        if not client_throttles(ctx.api.name, ctx.version):
            # before KIP-219 the broker itself held the response back for the throttle time
            await conn.park(partial(trio.sleep, fault.delay_ms / 1000))
    return response


async def carry_out_login(auth, conn: Connection, api, version: int, correlation_id: int,
                          client_id: str | None, request, answer: bytes) -> bytes:
    """A fault rule naming SaslAuthenticate, on a login the authenticator (security/sasl.py)
    would let pass: ``answer`` (the encoded response) unchanged when no rule fires. ``error``
    fails the login as Kafka fails one -- that code in the SaslAuthenticate response (Kafka's
    invalid-credentials message unless the rule has one) after the failed-authentication
    delay, an AuthenticationFailed event naming the rule, and the connection closed."""
    broker = auth.broker
    server = auth.server
    user = getattr(server, "attempted", None) or getattr(server, "user", None) or ""
    fault = broker.faults.match(api.key, version, client_id or "", request, "User:" + user,
                                conn.info.listener, login=True)
    if fault is None:
        return answer
    action = fault.action
    emit = broker.observer
    if emit is not None:
        from .events import FaultFired
        emit(FaultFired(at_ms=broker.now_ms(), rule_id=fault.rule_id, action=action,
                        connection_id=conn.id, peer=conn.peer, api=api.name, version=version,
                        correlation_id=correlation_id, client_id=client_id,
                        error_code=int(fault.error_code) if action == "error" else None,
                        delay_ms=fault.delay_ms if action == "delay" else None))
    if action == "error":
        from ..protocol.headers import encode_response
        from ..protocol.messages.sasl_authenticate import SaslAuthenticateResponse
        message = fault.message or (f"Authentication failed during {auth.doing} due to invalid "
                                    f"credentials with SASL mechanism {auth.mechanism}")
        response = SaslAuthenticateResponse(error_code=fault.error_code, error_message=message,
                                            auth_bytes=b"")
        await auth._fail(conn, encode_response(api, version, correlation_id, response),
                         f"fault rule {fault.rule_id}: {message}", fault.error_code)
    if action == "close_before":
        from .connection import CloseConnection
        raise CloseConnection(f"closed by fault rule {fault.rule_id} before SaslAuthenticate "
                              "was applied", "fault rule")
    if action == "blackhole":
        await conn.park(trio.sleep_forever)
    if action == "delay":
        await conn.park(partial(trio.sleep, fault.delay_ms / 1000))
    return answer
