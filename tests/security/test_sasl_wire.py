"""The SASL exchange on the wire, frames built by hand (wire.py) and SCRAM driven by
kafka-python's own ScramClient: each mechanism, wrong passwords, unknown mechanisms, requests
before authentication, v0 raw tokens (KIP-152), re-authentication and expiry (KIP-368)."""

import base64
import json

import pytest

from kafka.net.sasl.scram import ScramClient

from . import wire

USERS = {"emu.sasl.users": "alice:secret,bob:pw", "connection.failed.authentication.delay.ms": "0",
         "listeners": "SASL_PLAINTEXT://127.0.0.1:0"}


def port(bound, name="SASL_PLAINTEXT"):
    return int(bound.bootstrap_for(name).rpartition(":")[2])


async def authed(bound, mechanism="PLAIN", user="alice", password="secret", version=1):
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, mechanism))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(version, b"\0" + user.encode() + b"\0" + password.encode()))
    _, error, message, _, lifetime = wire.parse_authenticate(await conn.frame(), version)
    assert (error, message) == (0, None)
    return conn, lifetime


async def metadata_works(conn) -> None:
    await conn.send(wire.metadata_v1(correlation_id=77))
    frame = await conn.frame()
    assert frame is not None and frame[:4] == (77).to_bytes(4, "big")


async def test_plain_v1_then_requests_are_served(start_broker):
    bound = await start_broker(USERS)
    conn, lifetime = await authed(bound)
    assert lifetime == 0  # connections.max.reauth.ms is 0 and PLAIN has no credential expiry
    await metadata_works(conn)


async def test_handshake_lists_the_enabled_mechanisms(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "PLAIN", correlation_id=9))
    assert wire.parse_handshake(await conn.frame()) == (
        9, 0, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"])


async def test_plain_wrong_password_is_answered_then_closed(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "PLAIN"))
    await conn.frame()
    await conn.send(wire.authenticate(1, b"\0alice\0wrong"))
    _, error, message, token, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message, token) == (58, "Authentication failed: Invalid username or password",
                                       b"")
    assert await conn.closed()


async def test_plain_unknown_user_gets_the_same_answer(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "PLAIN"))
    await conn.frame()
    await conn.send(wire.authenticate(0, b"\0mallory\0secret"))
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 0)
    assert (error, message) == (58, "Authentication failed: Invalid username or password")
    assert await conn.closed()


async def test_unknown_mechanism_is_unsupported_with_the_enabled_list(start_broker):
    bound = await start_broker({**USERS, "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN"})
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "GSSAPI", correlation_id=5))
    assert wire.parse_handshake(await conn.frame()) == (5, 33, ["SCRAM-SHA-512", "PLAIN"])
    assert await conn.closed()


async def test_a_request_before_the_handshake_closes_without_answer(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.metadata_v1())
    assert await conn.closed()


async def test_api_versions_is_served_before_the_handshake(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.api_versions_v0(correlation_id=8))
    frame = await conn.frame()
    assert frame[:6] == (8).to_bytes(4, "big") + b"\0\0"
    conn2, _ = await authed(bound)
    await metadata_works(conn2)


async def test_another_request_during_authenticate_is_illegal_sasl_state(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "PLAIN"))
    await conn.frame()
    await conn.send(wire.api_versions_v0(correlation_id=12))
    frame = await conn.frame()
    assert frame[:6] == (12).to_bytes(4, "big") + (34).to_bytes(2, "big")
    assert await conn.closed()


async def test_v0_handshake_then_raw_plain_token(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(0, "PLAIN"))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(len(b"\0bob\0pw").to_bytes(4, "big") + b"\0bob\0pw")
    assert await conn.frame() == b""  # PLAIN's empty answer, as a raw size-prefixed token
    await metadata_works(conn)


async def test_v0_raw_token_failure_closes_without_answer(start_broker):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(0, "PLAIN"))
    await conn.frame()
    await conn.send(len(b"\0bob\0no").to_bytes(4, "big") + b"\0bob\0no")
    assert await conn.closed()


async def scram(conn, mechanism, user, password, version=1):
    client = ScramClient(user, password, mechanism)
    await conn.send(wire.handshake(1, mechanism))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(version, client.first_message()))
    _, error, message, server_first, _ = wire.parse_authenticate(await conn.frame(), version)
    if error:
        return error, message
    client.process_server_first_message(server_first)
    await conn.send(wire.authenticate(version, client.final_message()))
    _, error, message, server_final, _ = wire.parse_authenticate(await conn.frame(), version)
    if not error:
        client.process_server_final_message(server_final)  # checks the server's signature
    return error, message


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_scram_with_kafka_pythons_client(start_broker, mechanism):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    assert await scram(conn, mechanism, "alice", "secret") == (0, None)
    await metadata_works(conn)


@pytest.mark.parametrize("user,password", [("alice", "wrong"), ("nobody", "secret")])
async def test_scram_failure_hides_the_cause(start_broker, user, password):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    assert await scram(conn, "SCRAM-SHA-256", user, password, version=0) == (
        58, "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-256")
    assert await conn.closed()


def jws(claims: dict, alg: str = "none") -> str:
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part({'alg': alg})}.{part(claims)}."


def oauth_message(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


async def test_oauthbearer_unsecured_token_sets_lifetime_from_exp(start_broker):
    bound = await start_broker(USERS)
    now_s = bound.broker.now_ms() / 1000
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "OAUTHBEARER"))
    await conn.frame()
    await conn.send(wire.authenticate(1, oauth_message(jws({"sub": "carol", "iat": now_s - 5,
                                                            "exp": now_s + 3600}))))
    _, error, message, token, lifetime = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message, token) == (0, None, b"")
    assert 3_500_000 < lifetime <= 3_600_000  # the token's expiry bounds the session
    await metadata_works(conn)


@pytest.mark.parametrize("claims", [{"sub": "carol", "exp": 1.0}, {"exp": 4e9},
                                    {"sub": "carol"}])
async def test_oauthbearer_bad_token_gets_the_error_challenge(start_broker, claims):
    bound = await start_broker(USERS)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "OAUTHBEARER"))
    await conn.frame()
    await conn.send(wire.authenticate(1, oauth_message(jws(claims))))
    _, error, _, challenge, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, challenge) == (0, b'{"status":"invalid_token"}')
    await conn.send(wire.authenticate(1, b"\x01"))  # the client's answer to an error challenge
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message) == (58, '{"status":"invalid_token"}')
    assert await conn.closed()


async def test_after_authentication_sasl_requests_are_illegal(start_broker):
    bound = await start_broker(USERS)
    conn, _ = await authed(bound)
    await conn.send(wire.handshake(1, "PLAIN", correlation_id=21))
    assert wire.parse_handshake(await conn.frame()) == (21, 34, [])
    await conn.send(wire.authenticate(1, b"\0alice\0secret", correlation_id=22))
    assert wire.parse_authenticate(await conn.frame(), 1) == (
        22, 34, "SaslAuthenticate request received after successful authentication", b"", 0)
    await metadata_works(conn)


REAUTH = {**USERS, "connections.max.reauth.ms": "60000", "emu.clock": "manual"}


async def test_reauthentication_renews_the_session(start_broker):
    bound = await start_broker(REAUTH)
    conn, lifetime = await authed(bound)
    assert lifetime == 60000
    bound.broker.clock.advance(50_000)
    conn_lifetime = None
    await conn.send(wire.handshake(1, "PLAIN"))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(1, b"\0alice\0secret"))
    _, error, _, _, conn_lifetime = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, conn_lifetime) == (0, 60000)
    bound.broker.clock.advance(50_000)  # 100 s after the first login, 50 s after the second
    await metadata_works(conn)


async def test_an_expired_session_closes_on_the_next_request(start_broker):
    bound = await start_broker(REAUTH)
    conn, _ = await authed(bound)
    await metadata_works(conn)
    bound.broker.clock.advance(60_000)
    await conn.send(wire.metadata_v1())
    assert await conn.closed()


async def test_reauthentication_cannot_change_principal(start_broker):
    bound = await start_broker(REAUTH)
    conn, _ = await authed(bound)
    bound.broker.clock.advance(2_000)
    await conn.send(wire.handshake(1, "PLAIN"))
    await conn.frame()
    await conn.send(wire.authenticate(1, b"\0bob\0pw"))
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message) == (58, "Cannot change principals during re-authentication from "
                                    "User.alice: User.bob")
    assert await conn.closed()


async def test_reauthentication_within_a_second_is_an_ordinary_handshake(start_broker):
    bound = await start_broker(REAUTH)
    conn, _ = await authed(bound)
    bound.broker.clock.advance(2_000)
    await conn.send(wire.handshake(1, "PLAIN"))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(1, b"\0alice\0secret"))
    assert wire.parse_authenticate(await conn.frame(), 1)[1] == 0
    await conn.send(wire.handshake(1, "PLAIN", correlation_id=31))  # less than 1 s later
    assert wire.parse_handshake(await conn.frame()) == (31, 34, [])


async def test_reauthentication_with_another_mechanism_closes(start_broker):
    bound = await start_broker(REAUTH)
    conn, _ = await authed(bound)
    bound.broker.clock.advance(2_000)
    await conn.send(wire.handshake(1, "SCRAM-SHA-256"))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(1, b"n,,n=alice,r=abc"))
    assert await conn.closed()


async def test_default_listener_answers_sasl_handshake_with_illegal_state(start_broker):
    bound = await start_broker({})
    conn = await wire.Conn.open(bound.port)
    await conn.send(wire.handshake(1, "PLAIN", correlation_id=3))
    assert wire.parse_handshake(await conn.frame()) == (3, 34, [])


async def test_logins_reach_the_observer_seam(nursery):
    from functools import partial

    from kafka_emu.broker.events import Authenticated, AuthenticationFailed
    from kafka_emu.broker.server import serve
    from kafka_emu.testing import make_config
    from kafka_emu.trace.schema import to_record
    seen = []
    bound = await nursery.start(partial(serve, make_config(USERS), observer=seen.append))
    conn, _ = await authed(bound)
    bad = await wire.Conn.open(port(bound))
    assert await scram(bad, "SCRAM-SHA-512", "bob", "nope") == (
        58, "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-512")
    assert await bad.closed()
    events = [e for e in seen if isinstance(e, (Authenticated, AuthenticationFailed))]
    assert [(type(e).__name__, e.listener, e.mechanism) for e in events] == [
        ("Authenticated", "SASL_PLAINTEXT", "PLAIN"),
        ("AuthenticationFailed", "SASL_PLAINTEXT", "SCRAM-SHA-512")]
    assert (events[0].principal, events[0].reauthentication) == ("User:alice", False)
    assert (events[1].user, events[1].error_code) == ("bob", 58)
    assert to_record(events[1])["kind"] == "authentication_failed"


async def test_each_listener_can_enable_its_own_mechanisms(start_broker):
    bound = await start_broker({
        **USERS, "listeners": "SASL_PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                          "INTERNAL:SASL_PLAINTEXT",
        "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512"})
    internal = await wire.Conn.open(port(bound, "INTERNAL"))
    await internal.send(wire.handshake(1, "PLAIN", correlation_id=4))
    assert wire.parse_handshake(await internal.frame()) == (4, 33, ["SCRAM-SHA-512"])
    assert await internal.closed()
    conn, _ = await authed(bound)  # the other listener keeps the broker-wide list
    await metadata_works(conn)


async def test_a_frame_over_sasl_server_max_receive_size_fails_authentication(start_broker):
    bound = await start_broker({**USERS, "sasl.server.max.receive.size": "64"})
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "PLAIN"))
    await conn.frame()
    await conn.send(wire.authenticate(1, b"\0alice\0" + b"x" * 100))
    assert await conn.closed()
