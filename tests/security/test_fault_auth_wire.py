"""Fault rules on SASL logins, over the wire with the hand-built SASL encoder (wire.py): a rule
naming SaslAuthenticate fails (as Kafka fails a login: SASL_AUTHENTICATION_FAILED, Kafka's
message, connection closed), drops or holds the login of the principal it names, and no other;
a rule for every request of a principal leaves that principal's login alone."""

from __future__ import annotations

import trio
import trio.testing

from kafka_emu.control.faults import rule_spec, rules_of

from . import wire
from .test_sasl_wire import USERS, authed, metadata_works, port

KAFKA_MESSAGE = ("Authentication failed during authentication due to invalid credentials with "
                 "SASL mechanism PLAIN")


def add(broker, **spec) -> int:
    return rules_of(broker).add(**rule_spec(**spec)).id


async def login(bound, user: str, password: str, mechanism="PLAIN"):
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, mechanism))
    assert wire.parse_handshake(await conn.frame())[1] == 0
    await conn.send(wire.authenticate(1, b"\0" + user.encode() + b"\0" + password.encode()))
    return conn


async def test_an_error_rule_fails_alices_next_login_only(start_broker):
    bound = await start_broker(USERS)
    rule = add(bound.broker, action="error", api="SaslAuthenticate", principal="User:alice",
               error="SASL_AUTHENTICATION_FAILED")
    bob, _ = await authed(bound, user="bob", password="pw")  # bob: not matched
    await metadata_works(bob)
    conn = await login(bound, "alice", "secret")  # the right password
    _, error, message, token, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message, token) == (58, KAFKA_MESSAGE, b"")
    assert await conn.closed()
    again, _ = await authed(bound)  # the rule fired once: alice logs in now
    await metadata_works(again)
    described = rules_of(bound.broker).rules[rule].describe()
    assert (described["matched"], described["fired"]) == (1, 1)


async def test_the_rules_message_and_code(start_broker):
    bound = await start_broker(USERS)
    add(bound.broker, action="error", api=36, principal="User:*", error=58,
        message="locked out by the test")
    conn = await login(bound, "bob", "pw")
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message) == (58, "locked out by the test")
    assert await conn.closed()


async def test_close_before_drops_the_login_unanswered(start_broker):
    bound = await start_broker(USERS)
    add(bound.broker, action="close_before", api="SaslAuthenticate", principal="User:alice")
    conn = await login(bound, "alice", "secret")
    assert await conn.closed()


async def test_delay_holds_the_login_then_it_passes(start_broker):
    bound = await start_broker(USERS)
    rule = add(bound.broker, action="delay", api="SaslAuthenticate", delay_ms=20)
    conn, _ = await authed(bound)
    await metadata_works(conn)
    assert rules_of(bound.broker).rules[rule].fired == 1


async def test_a_wrong_password_fails_on_its_own_and_the_rule_is_not_used(start_broker):
    bound = await start_broker(USERS)
    rule = add(bound.broker, action="error", api="SaslAuthenticate", error=58,
               message="from the rule")
    conn = await login(bound, "alice", "wrong")
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert (error, message) == (58, "Authentication failed: Invalid username or password")
    assert rules_of(bound.broker).rules[rule].matched == 0


async def test_scram_login_fails_at_the_first_token_naming_the_user(start_broker):
    bound = await start_broker(USERS)
    add(bound.broker, action="error", api="SaslAuthenticate", principal="User:alice", error=58)
    conn = await wire.Conn.open(port(bound))
    await conn.send(wire.handshake(1, "SCRAM-SHA-256"))
    await conn.frame()
    await conn.send(wire.authenticate(1, b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL"))
    _, error, message, _, _ = wire.parse_authenticate(await conn.frame(), 1)
    assert error == 58 and message.endswith("with SASL mechanism SCRAM-SHA-256")
    assert await conn.closed()


async def test_a_rule_for_every_request_of_alice_leaves_her_login_alone(start_broker):
    bound = await start_broker(USERS)
    add(bound.broker, action="close_before", principal="User:alice", always=True)
    conn, _ = await authed(bound)  # the login passes ...
    await conn.send(wire.metadata_v1())
    assert await conn.closed()  # ... and her first request meets the rule
    bob, _ = await authed(bound, user="bob", password="pw")
    await metadata_works(bob)


async def test_blackhole_never_answers_and_the_client_closing_frees_it(start_broker):
    bound = await start_broker(USERS)
    rule = add(bound.broker, action="blackhole", api="SaslAuthenticate", principal="User:alice")
    conn = await login(bound, "alice", "secret")
    bob, _ = await authed(bound, user="bob", password="pw")  # the broker serves others meanwhile
    await metadata_works(bob)
    await trio.testing.wait_all_tasks_blocked()  # (alice's login has reached the broker)
    assert rules_of(bound.broker).rules[rule].fired == 1
    await conn.stream.aclose()  # the parked login is forgotten, the connection closed
    again, _ = await authed(bound)
    await metadata_works(again)
