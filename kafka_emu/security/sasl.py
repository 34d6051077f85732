"""A connection's SASL authenticator: Kafka's SaslServerAuthenticator rules, at the door.

The connection hands every frame of a SASL listener's connection to ``gate`` first, until the
connection is authenticated with a session that never expires (then the gate is dropped and
requests cost nothing extra). ``gate`` returns None to let the request be served as usual, or
the bytes to answer; it raises CloseConnection where Kafka closes the connection.

States (Kafka's SaslState, reduced):
- HANDSHAKE: only ApiVersions (served as usual) and SaslHandshake. Any other request closes the
  connection without an answer (IllegalSaslStateException "Unexpected Kafka request of type X
  during SASL handshake."). A mechanism not enabled is answered UNSUPPORTED_SASL_MECHANISM with
  the enabled list, then the connection closes.
- AUTHENTICATE: after SaslHandshake v0 the client's frames are raw SASL tokens and each answer is
  a length-prefixed raw token; a failure closes the connection without an answer. After v1
  (KIP-152) they are SaslAuthenticate requests; a failure is answered SASL_AUTHENTICATION_FAILED
  with Kafka's message, then the connection closes. Another request here is answered with its
  own error response, ILLEGAL_SASL_STATE, then the connection closes.
- COMPLETE: the principal is set on ConnectionInfo. KIP-368: the session expires at the earlier
  of connections.max.reauth.ms and an OAUTHBEARER token's exp; SaslAuthenticate v1+ tells the
  client its lifetime. A SaslHandshake on such a connection (at most once a second) starts a
  re-authentication with the same mechanism and principal; a request after expiry closes the
  connection (Kafka's "Disconnecting expired channel").

A control-plane fault rule naming SaslAuthenticate (control/faults.py) is asked once a token
would pass, with the principal logging in (broker/fault_actions.carry_out_login): a test fails a
login, or holds it, without a wrong password.

Failed answers wait connection.failed.authentication.delay.ms first, as Kafka delays them.
Time is the broker's clock (``now_ms``), so a test can expire sessions by advancing it.
"""

from __future__ import annotations

import logging
import struct
from typing import NoReturn

import trio

from ..broker.connection import CloseConnection
from ..errors import ErrorCode
from ..protocol.headers import decode_request, encode_response, peek_api
from ..protocol.registry import name_of
from .mechanisms import new_server
from .scram import SaslFailure
from .state import security_of

log = logging.getLogger("kafka_emu")

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18
HANDSHAKE, AUTHENTICATE, COMPLETE, REAUTH_BAD_MECHANISM = range(4)
MIN_REAUTH_INTERVAL_MS = 1000
_SIZE = struct.Struct(">i")


def _api_name(api_key: int) -> str:
    """Kafka's ApiKeys enum name (SASL_HANDSHAKE) for its messages."""
    try:
        name = name_of(api_key)
    except (KeyError, ValueError):
        return str(api_key)
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


class SaslAuthenticator:
    __slots__ = ("broker", "security", "state", "mechanism", "server", "headers", "user",
                 "expiry_ms", "last_reauth_ms", "previous", "bad_mechanism", "enabled",
                 "client_id")

    def __init__(self, broker, listener: str) -> None:
        self.broker = broker
        self.security = security_of(broker)
        self.enabled = list(self.security.config.mechanisms_of(listener))
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self.server = None
        self.headers = False
        self.user: str | None = None
        self.expiry_ms: int | None = None
        self.last_reauth_ms = 0
        self.previous: tuple[str, str] | None = None  # (mechanism, user) while re-authenticating
        self.bad_mechanism = ""
        self.client_id: str | None = None  # of the last request decoded (for fault rules)

    @property
    def doing(self) -> str:
        return "re-authentication" if self.previous is not None else "authentication"

    async def gate(self, conn, info, frame: bytes):
        state = self.state
        if state == COMPLETE:
            api_key = peek_api(frame)[0]
            now = self.broker.now_ms()
            if (api_key == SASL_HANDSHAKE and self.expiry_ms is not None
                    and (not self.last_reauth_ms
                         or now - self.last_reauth_ms >= MIN_REAUTH_INTERVAL_MS)):
                self.last_reauth_ms = now
                self.previous = (self.mechanism, self.user)  # type: ignore[assignment]
                self.state = HANDSHAKE
                return await self._handshake(conn, frame)
            if self.expiry_ms is not None and now >= self.expiry_ms:
                raise CloseConnection("SASL session expired without re-authentication "
                                      "(connections.max.reauth.ms or token expiry)",
                                      "sasl session expired")
            return None
        if len(frame) > self.security.config.sasl_server_max_receive_size:
            await self._fail(conn, None, "Failing SASL authentication due to invalid receive "
                                         "size (sasl.server.max.receive.size)")
        if state == AUTHENTICATE and not self.headers:
            return await self._raw_token(conn, info, frame)
        if state == REAUTH_BAD_MECHANISM:
            await self._fail(conn, None, self.bad_mechanism)
        api_key = peek_api(frame)[0]
        if state == HANDSHAKE:
            if api_key == API_VERSIONS:
                return None
            if api_key != SASL_HANDSHAKE:
                await self._fail(conn, None, f"Unexpected Kafka request of type "
                                 f"{_api_name(api_key)} during SASL handshake.",
                                 ErrorCode.ILLEGAL_SASL_STATE)
            return await self._handshake(conn, frame)
        return await self._authenticate(conn, info, frame, api_key)

    def _decode(self, frame: bytes):
        from ..broker.handlers import HANDLERS
        api_key, version, correlation_id = peek_api(frame)
        try:
            api = HANDLERS[api_key].api
        except KeyError:
            raise CloseConnection(f"unknown api key {api_key}", "unknown api key") from None
        supported = self.broker.advertised.get(api_key)
        if supported is None or version not in supported:
            raise CloseConnection(f"unsupported {api.name} version {version}",
                                  "unsupported version")
        header, request, _ = decode_request(api, version, frame)
        self.client_id = header.client_id
        return api, version, correlation_id, request

    async def _fail(self, conn, response: bytes | bytearray | None, reason: str,
                    code: int = ErrorCode.SASL_AUTHENTICATION_FAILED) -> NoReturn:
        """Kafka's failed authentication: the answer (if any) after the configured delay, then
        the connection closes."""
        log.info("%s: SASL %s failed (%s): %s", conn.peer, self.doing, self.mechanism, reason)
        emit = self.broker.observer
        if emit is not None:  # the one observer seam: timeline, traces, logs
            from ..broker.events import AuthenticationFailed
            emit(AuthenticationFailed(
                at_ms=self.broker.now_ms(), connection_id=conn.id, peer=conn.peer,
                listener=conn.info.listener, mechanism=self.mechanism,
                user=getattr(self.server, "attempted", None) or (self.previous or (None, None))[1],
                reauthentication=self.previous is not None, error_code=int(code),
                reason=reason))
        delay = self.security.config.failed_authentication_delay_ms
        if delay:
            await trio.sleep(delay / 1000)
        if response is not None:
            conn.enqueue(response)
            await conn.flush()
        raise CloseConnection(f"SASL {self.doing} failed: {reason}", "sasl authentication failed")

    async def _handshake(self, conn, frame: bytes) -> bytearray:
        from ..protocol.messages.sasl_handshake import SaslHandshakeResponse
        api, version, correlation_id, request = self._decode(frame)
        enabled = self.enabled
        mechanism = request.mechanism
        if mechanism not in enabled:
            response = SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                             mechanisms=enabled)
            self.mechanism = mechanism
            await self._fail(conn, encode_response(api, version, correlation_id, response),
                             f"Unsupported SASL mechanism {mechanism}",
                             ErrorCode.UNSUPPORTED_SASL_MECHANISM)
        self.headers = version >= 1
        if self.previous is not None and mechanism != self.previous[0]:
            self.bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not "
                                  "supported for re-authentication of mechanism "
                                  f"'{self.previous[0]}'")
            self.state = REAUTH_BAD_MECHANISM
        else:
            self.mechanism = mechanism
            self.server = new_server(mechanism, self.security.credentials)
            self.state = AUTHENTICATE
        response = SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=enabled)
        return encode_response(api, version, correlation_id, response)

    def _step(self, token: bytes, now: int) -> tuple[bytes, int]:
        """One token through the mechanism; (answer, session lifetime ms once complete)."""
        server = self.server
        answer = server.step(token, now)  # type: ignore[union-attr]
        if not server.complete:  # type: ignore[union-attr]
            return answer, 0
        user = server.user  # type: ignore[union-attr]
        if self.previous is not None and self.previous[1] != user:
            raise SaslFailure(f"Cannot change principals during re-authentication from "
                              f"User.{self.previous[1]}: User.{user}")
        max_reauth = self.security.config.connections_max_reauth_ms
        expiry = server.credential_expiry_ms  # type: ignore[union-attr]
        lifetime = 0
        if expiry is not None or max_reauth > 0:
            if expiry is None:
                lifetime = max_reauth
            elif max_reauth <= 0:
                lifetime = max(0, expiry - now)
            else:
                lifetime = max(0, min(expiry - now, max_reauth))
            self.expiry_ms = now + lifetime
        else:
            self.expiry_ms = None
        return answer, lifetime

    def _complete(self, conn, info, lifetime: int) -> None:
        info.principal = "User:" + (self.user or "")
        emit = self.broker.observer
        if emit is not None:
            from ..broker.events import Authenticated
            emit(Authenticated(at_ms=self.broker.now_ms(), connection_id=conn.id, peer=conn.peer,
                               listener=info.listener, mechanism=self.mechanism or "",
                               principal=info.principal,
                               reauthentication=self.previous is not None,
                               session_lifetime_ms=lifetime))
        self.state, self.server, self.previous = COMPLETE, None, None
        log.debug("%s: SASL %s authenticated as %s", conn.peer, self.mechanism, info.principal)
        if self.expiry_ms is None:
            conn.auth = None  # nothing more to check on this connection

    def _try_step(self, token: bytes) -> tuple[bytes, int] | SaslFailure:
        try:
            return self._step(token, self.broker.now_ms())
        except SaslFailure as exc:
            return exc

    async def _raw_token(self, conn, info, frame: bytes) -> bytes:
        stepped = self._try_step(bytes(frame))
        if isinstance(stepped, SaslFailure):
            await self._fail(conn, None, str(stepped))
        answer, lifetime = stepped
        if self.server.complete:  # type: ignore[union-attr]
            self.user = self.server.user  # type: ignore[union-attr]
            self._complete(conn, info, lifetime)
        return _SIZE.pack(len(answer)) + answer

    async def _authenticate(self, conn, info, frame: bytes, api_key: int) -> bytearray:
        from ..broker.error_response import error_response
        from ..protocol.messages.sasl_authenticate import SaslAuthenticateResponse
        api, version, correlation_id, request = self._decode(frame)
        if api_key != SASL_AUTHENTICATE:
            message = (f"Unexpected Kafka request of type {_api_name(api_key)} during SASL "
                       "authentication.")
            response = error_response(api, version, request, ErrorCode.ILLEGAL_SASL_STATE,
                                      message)
            await self._fail(conn, None if response is None else
                             encode_response(api, version, correlation_id, response), message,
                             ErrorCode.ILLEGAL_SASL_STATE)
        stepped = self._try_step(bytes(request.auth_bytes))
        if isinstance(stepped, SaslFailure):
            message = (f"Authentication failed during {self.doing} due to invalid credentials "
                       f"with SASL mechanism {self.mechanism}" if stepped.generic
                       else str(stepped))
            response = SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=message,
                auth_bytes=b"")
            await self._fail(conn, encode_response(api, version, correlation_id, response),
                             str(stepped))
        answer, lifetime = stepped
        response = SaslAuthenticateResponse(error_code=ErrorCode.NONE, auth_bytes=answer,
                                            session_lifetime_ms=lifetime)
        data = encode_response(api, version, correlation_id, response)
        if self.broker.faults is not None:  # a control-plane rule may fail or hold this login
            from ..broker.fault_actions import carry_out_login
            data = await carry_out_login(self, conn, api, version, correlation_id,
                                         self.client_id, request, data)
        if self.server.complete:  # type: ignore[union-attr]
            self.user = self.server.user  # type: ignore[union-attr]
            self._complete(conn, info, lifetime)
        return data
