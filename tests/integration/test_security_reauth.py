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
