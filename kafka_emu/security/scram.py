"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer runs it.

Pure: a ``ScramCredential`` (salt, iterations, stored key, server key) per user and mechanism,
and ``ScramServer``, two steps: the client-first message gets the server-first message (the
client's nonce plus ours, the salt, the iterations); the client-final message is checked (nonce,
proof) and answered with the server signature. No channel binding (``n,,``), as Kafka.

Failures raise ``SaslFailure``: ``generic`` ones are answered with Kafka's message that names
only the mechanism ("... due to invalid credentials with SASL mechanism SCRAM-SHA-256"), the
others (an authorization id other than the user) with their own text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

import attrs

HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
# the wire code of each mechanism in Describe/AlterUserScramCredentials (Kafka's ScramMechanism)
MECHANISM_CODES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384  # AlterUserScramCredentials refuses more (Kafka's ScramMechanism)
DEFAULT_ITERATIONS = 4096


class SaslFailure(Exception):
    """Authentication failed; ``generic``: answer with Kafka's message that hides the cause."""

    def __init__(self, message: str, *, generic: bool = False) -> None:
        super().__init__(message)
        self.generic = generic


@attrs.frozen
class ScramCredential:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def _hmac(name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, name).digest()


def credential_from_salted(mechanism: str, salt: bytes, salted_password: bytes,
                           iterations: int) -> ScramCredential:
    name = HASHES[mechanism]
    client_key = _hmac(name, salted_password, b"Client Key")
    return ScramCredential(salt, iterations, hashlib.new(name, client_key).digest(),
                           _hmac(name, salted_password, b"Server Key"))


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(HASHES[mechanism], password.encode(), salt, iterations)


def make_credential(mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS,
                    salt: bytes | None = None) -> ScramCredential:
    salt = os.urandom(16) if salt is None else salt
    return credential_from_salted(mechanism, salt,
                                  salted_password(mechanism, password, salt, iterations),
                                  iterations)


def _attributes(text: str) -> dict[str, str]:
    found = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise SaslFailure(f"Invalid SCRAM message: {text!r}", generic=True)
        found[key] = value
    return found


def username_of(sasl_name: str) -> str:
    """RFC 5802's saslname: "=2C" is ",", "=3D" is "="."""
    return sasl_name.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """One authentication. ``lookup(user)`` gives the user's credential or None."""

    def __init__(self, mechanism: str, lookup) -> None:
        self.mechanism = mechanism
        self.lookup = lookup
        self.complete = False
        self.user: str | None = None
        self.attempted: str | None = None  # the user named, for failed-login events
        self._state = "first"
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None
        self.credential_expiry_ms: int | None = None

    def step(self, token: bytes, now_ms: int) -> bytes:
        try:
            text = token.decode()
        except UnicodeDecodeError:
            raise SaslFailure("Invalid SCRAM message", generic=True) from None
        if self._state == "first":
            return self._first(text)
        if self._state == "final":
            return self._final(text)
        raise SaslFailure(f"Unexpected challenge in Sasl server state {self._state}")

    def _first(self, text: str) -> bytes:
        # gs2-header "n,[a=authzid]," then client-first-message-bare "n=user,r=nonce[,ext]"
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or (parts[1] and
                                                           not parts[1].startswith("a=")):
            raise SaslFailure("Invalid SCRAM client first message", generic=True)
        authzid = parts[1][2:]
        bare = parts[2]
        attributes = _attributes(bare)
        if "n" not in attributes or "r" not in attributes:
            raise SaslFailure("Invalid SCRAM client first message", generic=True)
        user = self.attempted = username_of(attributes["n"])
        credential = self.lookup(user)
        if credential is None:
            raise SaslFailure("Authentication failed: Invalid user credentials", generic=True)
        if authzid and authzid != user:
            raise SaslFailure("Authentication failed: Client requested an authorization id "
                              "that is different from username")
        if credential.iterations < MIN_ITERATIONS:
            raise SaslFailure(f"Iterations {credential.iterations} is less than the minimum "
                              f"{MIN_ITERATIONS} for {self.mechanism}", generic=True)
        self.user, self._credential, self._client_first_bare = user, credential, bare
        self._nonce = attributes["r"] + secrets.token_urlsafe(24)
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode()

    def _final(self, text: str) -> bytes:
        without_proof, sep, proof_text = text.rpartition(",p=")
        if not sep:
            raise SaslFailure("Invalid SCRAM client final message", generic=True)
        attributes = _attributes(without_proof)
        # Kafka checks only that the nonce ends with ours (Debian's librdkafka 1.x sends the
        # client's nonce before the combined one, and Kafka accepts it)
        if not attributes.get("r", "").endswith(self._nonce):
            raise SaslFailure("Invalid client nonce in the final client message.", generic=True)
        credential = self._credential
        assert credential is not None
        name = HASHES[self.mechanism]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = _hmac(name, credential.stored_key, auth_message)
        try:
            proof = base64.b64decode(proof_text, validate=True)
        except ValueError:
            raise SaslFailure("Invalid client credentials", generic=True) from None
        if len(proof) != len(signature):
            raise SaslFailure("Invalid client credentials", generic=True)
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(name, client_key).digest(), credential.stored_key):
            raise SaslFailure("Invalid client credentials", generic=True)
        server_signature = _hmac(name, credential.server_key, auth_message)
        self._state, self.complete = "complete", True
        return b"v=" + base64.b64encode(server_signature)
