"""KIP-368 with a real client: librdkafka (confluent-kafka) re-authenticates on its connection
before connections.max.reauth.ms runs out, and keeps producing; the broker sees the
re-authentications as Authenticated events with reauthentication=True."""

from __future__ import annotations

import time

from kafka_emu.broker.events import Authenticated
from kafka_emu.testing import make_config, run_in_thread

SETTINGS = {"listeners": "SASL_SSL://127.0.0.1:0", "emu.sasl.users": "alice:alice-secret",
            "connections.max.reauth.ms": "1500"}


def test_librdkafka_reauthenticates_and_keeps_producing():
    from confluent_kafka import Producer
    events = []
    with run_in_thread(make_config(SETTINGS, topics={"t": 1}), observer=events.append) as emu:
        producer = Producer({"bootstrap.servers": emu.listeners["SASL_SSL"],
                             "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-256",
                             "sasl.username": "alice", "sasl.password": "alice-secret",
                             "ssl.ca.location": emu.ca_file})
        failures = []
        deadline = time.monotonic() + 60
        sent = 0
        # produce until the broker has seen two re-authentications (or the deadline)
        while time.monotonic() < deadline:
            if sum(1 for e in events if isinstance(e, Authenticated) and e.reauthentication) >= 2:
                break
            producer.produce("t", b"x", on_delivery=lambda err, _: err and failures.append(err))
            sent += 1
            producer.flush(10)
            time.sleep(0.1)
    logins = [e for e in events if isinstance(e, Authenticated)]
    again = [e for e in logins if e.reauthentication]
    assert len(again) >= 2, logins
    assert all(e.principal == "User:alice" and e.session_lifetime_ms == 1500 for e in logins)
    # the same connection re-authenticated (no new connection per session)
    assert {e.connection_id for e in again} <= {e.connection_id for e in logins
                                                if not e.reauthentication}
    assert failures == [] and sent > 0


def test_librdkafka_refreshes_a_short_oauthbearer_token_and_reauthenticates():
    """No connections.max.reauth.ms: the token's exp alone bounds the session (as on Kafka), and
    librdkafka refreshes its unsecured token and re-authenticates before it runs out."""
    from confluent_kafka import Producer
    events = []
    settings = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}
    with run_in_thread(make_config(settings, topics={"t": 1}), observer=events.append) as emu:
        producer = Producer({"bootstrap.servers": emu.listeners["SASL_PLAINTEXT"],
                             "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanisms": "OAUTHBEARER",
                             "enable.sasl.oauthbearer.unsecure.jwt": True,
                             "sasl.oauthbearer.config": "principal=alice lifeSeconds=3"})
        failures = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(isinstance(e, Authenticated) and e.reauthentication for e in events):
                break
            producer.produce("t", b"x", on_delivery=lambda err, _: err and failures.append(err))
            producer.flush(10)
            time.sleep(0.1)
    logins = [e for e in events if isinstance(e, Authenticated)]
    assert any(e.reauthentication for e in logins), logins
    assert all(e.mechanism == "OAUTHBEARER" and e.principal == "User:alice" for e in logins)
    assert all(0 < e.session_lifetime_ms <= 3000 for e in logins)
    assert failures == []
