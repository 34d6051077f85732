"""Fault rules that know about authentication, with real clients over SASL_PLAINTEXT (issue #38
item 5): a rule fails alice's next login -- her right password and all -- and librdkafka and
kafka-python report the authentication error Kafka's failed login gives them; the timeline
records the failed login naming the rule. A rule matched by principal fails alice's produce
(TOPIC_AUTHORIZATION_FAILED) and not bob's."""

from __future__ import annotations

import time

import pytest

from kafka_emu.testing import make_config, run_in_thread

from .helpers import unique

SETTINGS = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "emu.sasl.users": "alice:alice-secret,bob:bob-secret",
            "connection.failed.authentication.delay.ms": "0"}


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(SETTINGS, topics={"orders": 1})) as emu:
        yield emu


@pytest.fixture(autouse=True)
def no_rules(emu):
    emu.clear_faults()
    yield
    emu.clear_faults()


def conf(emu, user, mechanism="SCRAM-SHA-256"):
    return {"bootstrap.servers": emu.listeners["SASL_PLAINTEXT"],
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mechanism,
            "sasl.username": user, "sasl.password": f"{user}-secret"}


def test_confluent_login_failed_by_a_rule_then_the_next_one_passes(emu):
    from confluent_kafka import KafkaError, Producer
    since = emu.timeline_seq()
    rule = emu.add_fault("error", api="SaslAuthenticate", principal="User:alice",
                         error="SASL_AUTHENTICATION_FAILED")
    errors = []
    producer = Producer({**conf(emu, "alice"), "error_cb": errors.append,
                         "reconnect.backoff.ms": 100})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in errors[0].str()
    # the rule fired once: librdkafka's reconnect logs in and the record goes through
    value = unique("v").encode()
    producer.produce("orders", value)
    assert producer.flush(30) == 0
    [listed] = emu.faults()
    assert (listed["id"], listed["matched"], listed["fired"]) == (rule, 1, 1)
    events = emu.timeline(since=since, types=["AuthenticationFailed", "FaultFired",
                                              "Authenticated"])
    kinds = [(e["type"], e.get("principal") or e.get("user")) for e in events]
    assert kinds[:2] == [("FaultFired", None), ("AuthenticationFailed", "alice")], kinds
    assert ("Authenticated", "User:alice") in kinds[2:]
    failed = events[1]
    assert failed["error_code"] == 58 and failed["reason"].startswith(f"fault rule {rule}: ")
    assert (failed["listener"], failed["mechanism"]) == ("SASL_PLAINTEXT", "SCRAM-SHA-256")


def test_kafka_python_plain_login_failed_with_the_rules_message(emu, caplog):
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError
    emu.add_fault("error", api="SaslAuthenticate", principal="User:bob", always=True,
                  error="SASL_AUTHENTICATION_FAILED", message="bob is locked out")
    with pytest.raises(KafkaError):
        KafkaAdminClient(bootstrap_servers=emu.listeners["SASL_PLAINTEXT"],
                         security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                         sasl_plain_username="bob", sasl_plain_password="bob-secret",
                         bootstrap_timeout_ms=3000)
    assert "bob is locked out" in caplog.text
    assert emu.faults()[0]["fired"] >= 1


def test_a_rule_by_principal_fails_alices_produce_and_not_bobs(emu):
    from confluent_kafka import KafkaError, Producer
    emu.add_fault("error", api="Produce", principal="User:alice", listener="SASL_PLAINTEXT",
                  error="TOPIC_AUTHORIZATION_FAILED", always=True)
    outcomes = {}
    for user in ("alice", "bob"):
        producer = Producer({**conf(emu, user, "PLAIN"), "retries": 0})
        producer.produce("orders", user.encode(),
                         on_delivery=lambda err, msg, user=user: outcomes.setdefault(user, err))
        producer.flush(30)
    assert outcomes["bob"] is None
    assert outcomes["alice"].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    [rule] = emu.faults()
    assert rule["fired"] >= 1 and rule["matched"] == rule["fired"]  # bob's never matched
