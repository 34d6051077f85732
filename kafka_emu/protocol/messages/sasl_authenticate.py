"""SaslAuthenticate (36): valid 0-2, flexible 2+. v1 SessionLifetimeMs (KIP-368)."""

from ..schema import BYTES, INT16, INT64, STRING, Api, field, message


@message(api_key=36, kind="request", valid="0-2", flexible="2+")
class SaslAuthenticateRequest:
    auth_bytes: bytes = field(BYTES, "0+")


@message(api_key=36, kind="response", valid="0-2", flexible="2+")
class SaslAuthenticateResponse:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    auth_bytes: bytes = field(BYTES, "0+")
    session_lifetime_ms: int = field(INT64, "1+", ignorable=True)


API = Api(36, "SaslAuthenticate", SaslAuthenticateRequest, SaslAuthenticateResponse)
