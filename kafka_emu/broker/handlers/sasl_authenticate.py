"""SaslAuthenticate v0-2 outside authentication (v1 SessionLifetimeMs, KIP-368; v2 flexible):
KafkaApis answers ILLEGAL_SASL_STATE with Kafka's message. During authentication the
connection's authenticator (kafka_emu/security/sasl.py) answers it instead."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.sasl_authenticate import API, SaslAuthenticateResponse
from . import Handler

MESSAGE = "SaslAuthenticate request received after successful authentication"


async def sasl_authenticate(ctx, request) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                                    error_message=MESSAGE, auth_bytes=b"")


HANDLER = Handler(API, "0-2", sasl_authenticate)
