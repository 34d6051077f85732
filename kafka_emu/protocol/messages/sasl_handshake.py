"""SaslHandshake (17): valid 0-1, never flexible. v0: raw SASL tokens follow; v1: SaslAuthenticate
requests carry them (KIP-152)."""

from ..schema import INT16, STRING, Api, Array, field, message


@message(api_key=17, kind="request", valid="0-1", flexible="none")
class SaslHandshakeRequest:
    mechanism: str = field(STRING, "0+")


@message(api_key=17, kind="response", valid="0-1", flexible="none")
class SaslHandshakeResponse:
    error_code: int = field(INT16, "0+")
    mechanisms: list = field(Array(STRING), "0+")


API = Api(17, "SaslHandshake", SaslHandshakeRequest, SaslHandshakeResponse)
