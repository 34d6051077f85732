"""The mechanisms' pure server sides with explicit now_ms: SCRAM against kafka-python's own
ScramClient (an independent implementation) for any password, PLAIN's and the unsecured JWS
validator's refusals with Kafka's messages."""

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.net.sasl.scram import ScramClient

from kafka_emu.security.mechanisms import (Credentials, InvalidToken, OAuthBearerServer,
                                           PlainServer, validate_unsecured_jws)
from kafka_emu.security.scram import SaslFailure, ScramServer, make_credential

NAMES = st.text(st.characters(whitelist_categories=("Lu", "Ll", "Nd")), min_size=1, max_size=12)
PASSWORDS = st.text(min_size=1, max_size=20)


@settings(max_examples=25, deadline=None)
@given(user=NAMES, password=PASSWORDS, other=PASSWORDS,
       mechanism=st.sampled_from(["SCRAM-SHA-256", "SCRAM-SHA-512"]))
def test_scram_agrees_with_an_independent_client(user, password, other, mechanism):
    credential = make_credential(mechanism, password, 4096, salt=b"0123456789abcdef")
    for attempt in (password, other):
        server = ScramServer(mechanism, {user: credential}.get)
        client = ScramClient(user, attempt, mechanism)
        client.process_server_first_message(server.step(client.first_message(), 0))
        if attempt == password:
            final = server.step(client.final_message(), 0)
            client.process_server_final_message(final)  # raises on a wrong server signature
            assert server.complete and server.user == user
        else:
            with pytest.raises(SaslFailure) as caught:
                server.step(client.final_message(), 0)
            assert caught.value.generic and not server.complete


def test_scram_refuses_an_authorization_id_other_than_the_user():
    credential = make_credential("SCRAM-SHA-256", "pw")
    server = ScramServer("SCRAM-SHA-256", {"alice": credential}.get)
    with pytest.raises(SaslFailure, match="authorization id that is different") as caught:
        server.step(b"n,a=bob,n=alice,r=abc", 0)
    assert not caught.value.generic  # answered with its own text, as Kafka


def test_scram_below_minimum_iterations_is_refused():
    credential = make_credential("SCRAM-SHA-512", "pw", iterations=1000)
    server = ScramServer("SCRAM-SHA-512", {"alice": credential}.get)
    with pytest.raises(SaslFailure, match="Iterations 1000 is less than the minimum 4096"):
        server.step(b"n,,n=alice,r=abc", 0)


@pytest.mark.parametrize("token,message", [
    (b"alice\0pw", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"\0\0pw", "Authentication failed: username not specified"),
    (b"\0alice\0", "Authentication failed: password not specified"),
    (b"bob\0alice\0pw", "Authentication failed: Client requested an authorization id that is "
                        "different from username"),
])
def test_plain_refusals(token, message):
    server = PlainServer(Credentials({"alice": "pw"}))
    with pytest.raises(SaslFailure, match=message):
        server.step(token, 0)


def jws(header, claims, signature=""):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part(header)}.{part(claims)}.{signature}"


NOW = 1_700_000_000_000


@pytest.mark.parametrize("token,reason", [
    (jws({"alg": "HS256"}, {"sub": "a", "exp": 2e9}), "alg none"),
    (jws({"alg": "none"}, {"sub": "a", "exp": 2e9}, "sig"), "empty signature"),
    (jws({"alg": "none"}, {"sub": 7, "exp": 2e9}), "incorrect type"),
    (jws({"alg": "none"}, {"sub": "a", "exp": 2e9, "iat": 1.8e9}), "Issued At"),
    (jws({"alg": "none"}, {"sub": "a", "exp": 1.6e9}), "Expiration Time"),
    (jws({"alg": "none"}, {"sub": "a"}), "Required claim missing: exp"),
    ("not.a-jws", "three parts"),
])
def test_unsecured_jws_refusals(token, reason):
    with pytest.raises(InvalidToken, match=reason):
        validate_unsecured_jws(token, NOW)


def test_unsecured_jws_principal_and_expiry():
    token = jws({"alg": "none"}, {"sub": "carol", "iat": 1.6e9, "exp": 1.8e9, "scope": "x"})
    assert validate_unsecured_jws(token, NOW) == ("carol", 1_800_000_000_000)
    server = OAuthBearerServer()
    assert server.step(f"n,a=carol,\x01auth=Bearer {token}\x01\x01".encode(), NOW) == b""
    assert (server.complete, server.user, server.credential_expiry_ms) == (
        True, "carol", 1_800_000_000_000)
    other = OAuthBearerServer()
    with pytest.raises(SaslFailure, match=r"authorization id \(dave\) that is different"):
        other.step(f"n,a=dave,\x01auth=Bearer {token}\x01\x01".encode(), NOW)
