"""SaslHandshake v0-1 outside authentication: on a listener without SASL, or on an authenticated
connection that is not re-authenticating (KIP-368 lets a handshake start re-authentication only
when the session has an expiry, and at most once a second: kafka_emu/security/sasl.py), Kafka's
KafkaApis answers ILLEGAL_SASL_STATE with no mechanisms. The exchange itself is the connection's
authenticator's, never this handler's."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.sasl_handshake import API, SaslHandshakeResponse
from . import Handler


async def sasl_handshake(ctx, request) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


HANDLER = Handler(API, "0-1", sasl_handshake)
