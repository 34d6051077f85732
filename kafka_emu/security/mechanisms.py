"""The SASL mechanisms' server sides (pure): PLAIN, SCRAM-SHA-256/512 (scram.py), OAUTHBEARER
with Kafka's unsecured JWS tokens, and the broker's credential store.

Each server has ``step(token, now_ms) -> bytes`` (the server's answer, maybe empty),
``complete``, ``user`` (the principal's name once complete) and ``credential_expiry_ms`` (an
OAUTHBEARER token's ``exp``: the session ends there even without connections.max.reauth.ms, as
on Kafka). Failures raise ``SaslFailure`` with Kafka's messages (PlainSaslServer,
ScramSaslServer, OAuthBearerSaslServer and the unsecured validator).
"""

from __future__ import annotations

import base64
import hmac
import json
import math

from .scram import (DEFAULT_ITERATIONS, HASHES, SaslFailure, ScramCredential, ScramServer,
                    make_credential)


class Credentials:
    """Users known to the broker: a password (PLAIN; SCRAM credentials derived from it) and
    SCRAM credentials per mechanism (also set by AlterUserScramCredentials)."""

    def __init__(self, users=None) -> None:
        self.passwords: dict[str, str] = {}
        self.scram: dict[str, dict[str, ScramCredential]] = {m: {} for m in HASHES}
        for user, password in (users or {}).items():
            self.set_password(user, password)

    def set_password(self, user: str, password: str) -> None:
        self.passwords[user] = password
        for mechanism in HASHES:
            self.scram[mechanism][user] = make_credential(mechanism, password, DEFAULT_ITERATIONS)

    def scram_lookup(self, mechanism: str):
        return self.scram[mechanism].get


class PlainServer:
    """PLAIN (RFC 4616): one message ``authzid NUL user NUL password``."""

    credential_expiry_ms = None

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.complete = False
        self.user: str | None = None
        self.attempted: str | None = None  # the user named, for failed-login events

    def step(self, token: bytes, now_ms: int) -> bytes:
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise SaslFailure(f"Invalid SASL/PLAIN response: expected 3 tokens, got "
                              f"{len(parts)}")
        authzid, user, password = parts
        self.attempted = user or None
        if not user:
            raise SaslFailure("Authentication failed: username not specified")
        if not password:
            raise SaslFailure("Authentication failed: password not specified")
        known = self.credentials.passwords.get(user)
        if known is None or not hmac.compare_digest(known.encode(), password.encode()):
            raise SaslFailure("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslFailure("Authentication failed: Client requested an authorization id "
                              "that is different from username")
        self.user, self.complete = user, True
        return b""


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class InvalidToken(Exception):
    pass


def validate_unsecured_jws(token: str, now_ms: int) -> tuple[str, int | None]:
    """(principal, expiry ms) of an unsecured JWS (``alg: none``) as Kafka's
    OAuthBearerUnsecuredValidatorCallbackHandler checks it: ``sub`` a string, ``iat`` (if
    there) not in the future, ``exp`` present and not past, ``exp`` after ``iat``."""
    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        raise InvalidToken("an unsecured JWS has three parts and an empty signature")
    try:
        header = json.loads(_b64url(parts[0]))
        claims = json.loads(_b64url(parts[1]))
    except (ValueError, UnicodeDecodeError):
        raise InvalidToken("malformed JSON") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise InvalidToken("malformed JSON")
    if header.get("alg") != "none":
        raise InvalidToken("Unsecured JWS must have alg none")
    sub = claims.get("sub")
    if sub is None:
        raise InvalidToken("Required claim missing: sub")
    if not isinstance(sub, str) or not sub.strip():
        raise InvalidToken(f"The sub claim had the incorrect type: {type(sub).__name__}")

    def seconds(name: str) -> float | None:
        value = claims.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise InvalidToken(f"The {name} claim had the incorrect type")
        return float(value)

    iat, exp = seconds("iat"), seconds("exp")
    if iat is not None and iat * 1000 > now_ms:
        raise InvalidToken(f"The Issued At value ({iat} seconds) was after the indicated time")
    if exp is None:
        raise InvalidToken("Required claim missing: exp")
    if now_ms >= exp * 1000:
        raise InvalidToken(f"The indicated time ({now_ms / 1000} seconds) was not before the "
                           f"Expiration Time value ({exp} seconds)")
    if iat is not None and exp <= iat:
        raise InvalidToken("The Expiration Time time was not after the Issued At time")
    return sub, int(exp * 1000)


class OAuthBearerServer:
    """OAUTHBEARER (RFC 7628): ``n,[a=authzid],\\x01auth=Bearer <token>\\x01[k=v\\x01]\\x01``.
    A token that does not validate is answered with ``{"status":"invalid_token"}``; the client
    sends ``\\x01`` and then fails with that text (Kafka's OAuthBearerSaslServer)."""

    def __init__(self) -> None:
        self.complete = False
        self.user: str | None = None
        self.credential_expiry_ms: int | None = None
        self._error: str | None = None

    def step(self, token: bytes, now_ms: int) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise SaslFailure(self._error)
        self._error = None
        text = token.decode("utf-8", "replace")
        gs2, sep, rest = text.partition("\x01")
        gs2_parts = gs2.split(",")
        if not sep or len(gs2_parts) < 2 or gs2_parts[0] != "n":
            raise SaslFailure("Invalid OAUTHBEARER client first message", generic=True)
        authzid = gs2_parts[1][2:] if gs2_parts[1].startswith("a=") else ""
        fields = dict(kv.partition("=")[::2] for kv in rest.split("\x01") if kv)
        auth = fields.get("auth", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise SaslFailure("Invalid OAUTHBEARER client first message", generic=True)
        try:
            principal, expiry = validate_unsecured_jws(value.strip(), now_ms)
        except InvalidToken:
            self._error = '{"status":"invalid_token"}'
            return self._error.encode()
        if authzid and authzid != principal:
            raise SaslFailure(f"Authentication failed: Client requested an authorization id "
                              f"({authzid}) that is different from the token's principal "
                              f"name ({principal})")
        self.user, self.credential_expiry_ms, self.complete = principal, expiry, True
        return b""


def new_server(mechanism: str, credentials: Credentials):
    if mechanism == "PLAIN":
        return PlainServer(credentials)
    if mechanism in HASHES:
        return ScramServer(mechanism, credentials.scram_lookup(mechanism))
    if mechanism == "OAUTHBEARER":
        return OAuthBearerServer()
    raise ValueError(mechanism)
