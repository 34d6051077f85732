"""Real clients meet fault rules and recover the way they do on Kafka.

- confluent-kafka and kafka-python consumers rejoin after REBALANCE_IN_PROGRESS on a commit;
- clients look the coordinator up again after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE;
- an idempotent producer whose Produce was applied but never answered (close_after) retries,
  and the log holds the record once;
- a JoinGroup delayed past the client's request timeout is sent again and the group forms.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from kafka import KafkaConsumer

from kafka_emu.broker.events import FaultFired, RequestHandled
from kafka_emu.errors import ErrorCode

SESSION_TIMEOUT_MS = 6000
HEARTBEAT_MS = 500


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def wait_until(fn, *, timeout=30.0, tick=None, message="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        if tick is not None:
            tick()
        else:
            time.sleep(0.05)


def requests(events, api, group=None):
    return [e for e in list(events) if isinstance(e, RequestHandled) and e.api == api
            and (group is None or e.group_id == group)]


def fired(events):
    return [e for e in list(events) if isinstance(e, FaultFired)]


def confluent_consumer(emu, group, topic, **extra):
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                  "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_MS,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest", **extra})
    c.subscribe([topic])
    return c


def kafka_python_consumer(emu, group, topic, **extra):
    c = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id=group,
                      session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_MS,
                      enable_auto_commit=False, auto_offset_reset="earliest", **extra)
    c.subscribe([topic])
    return c


def stable(emu, group):
    g = emu.describe_group(group)
    return g.state == "Stable" and len(g.members) == 1


# -- REBALANCE_IN_PROGRESS on commit: the consumer rejoins -------------------------------------

def test_confluent_consumer_rejoins_after_rebalance_in_progress_on_commit(kafka_emu_factory):
    events = []
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 2}, observer=events.append)
    c = confluent_consumer(emu, group, topic)
    try:
        wait_until(lambda: c.assignment() and stable(emu, group), tick=lambda: c.poll(0.05),
                   message="the consumer to join")
        joins = len(requests(events, "JoinGroup", group))
        # On Kafka a commit meets REBALANCE_IN_PROGRESS while the group rebalances, and so do
        # the heartbeats: librdkafka hands the commit error to the application and rejoins on
        # the heartbeat's (rdkafka_cgrp.c), so the test makes both say it.
        emu.add_fault("error", api="OffsetCommit", group_id=group,
                      error="REBALANCE_IN_PROGRESS")
        emu.add_fault("error", api="Heartbeat", group_id=group, error="REBALANCE_IN_PROGRESS")
        with pytest.raises(KafkaException) as info:
            c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        assert info.value.args[0].code() == ErrorCode.REBALANCE_IN_PROGRESS
        wait_until(lambda: len(requests(events, "JoinGroup", group)) > joins
                   and c.assignment() and stable(emu, group),
                   tick=lambda: c.poll(0.05), message="the consumer to rejoin")
        c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)  # goes through
        assert [rule["fired"] for rule in emu.faults()] == [1, 1]
    finally:
        c.close()


def test_kafka_python_consumer_rejoins_after_rebalance_in_progress_on_commit(kafka_emu_factory):
    from kafka.errors import CommitFailedError, RebalanceInProgressError
    from kafka.structs import OffsetAndMetadata
    from kafka import TopicPartition as KTP
    events = []
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 2}, observer=events.append)
    c = kafka_python_consumer(emu, group, topic)
    try:
        wait_until(lambda: c.assignment() and stable(emu, group),
                   tick=lambda: c.poll(timeout_ms=50), message="the consumer to join")
        joins = len(requests(events, "JoinGroup", group))
        emu.add_fault("error", api="OffsetCommit", group_id=group, error=27)
        with pytest.raises((CommitFailedError, RebalanceInProgressError)):
            c.commit({KTP(topic, 0): OffsetAndMetadata(1, "", -1)})
        wait_until(lambda: len(requests(events, "JoinGroup", group)) > joins
                   and c.assignment() and stable(emu, group),
                   tick=lambda: c.poll(timeout_ms=50), message="the consumer to rejoin")
        c.commit({KTP(topic, 0): OffsetAndMetadata(1, "", -1)})
    finally:
        c.close()


# -- the coordinator moved: the client looks it up again --------------------------------------

def test_kafka_python_refinds_the_coordinator_after_not_coordinator(kafka_emu_factory):
    events = []
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1}, observer=events.append)
    c = kafka_python_consumer(emu, group, topic)
    try:
        wait_until(lambda: c.assignment() and stable(emu, group),
                   tick=lambda: c.poll(timeout_ms=50), message="the consumer to join")
        lookups = len(requests(events, "FindCoordinator"))
        emu.add_fault("error", api="Heartbeat", group_id=group, error="NOT_COORDINATOR")
        wait_until(lambda: fired(events) and len(requests(events, "FindCoordinator")) > lookups,
                   tick=lambda: c.poll(timeout_ms=50), message="a new FindCoordinator")
        # the consumer carries on with the group it had
        wait_until(lambda: stable(emu, group) and c.assignment(),
                   tick=lambda: c.poll(timeout_ms=50), message="the group to stay Stable")
    finally:
        c.close()


def test_confluent_refinds_the_coordinator_after_coordinator_not_available(kafka_emu_factory):
    events = []
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1}, observer=events.append)
    c = confluent_consumer(emu, group, topic)
    try:
        wait_until(lambda: c.assignment() and stable(emu, group), tick=lambda: c.poll(0.05),
                   message="the consumer to join")
        lookups = len(requests(events, "FindCoordinator"))
        emu.add_fault("error", api="Heartbeat", group_id=group,
                      error="COORDINATOR_NOT_AVAILABLE")
        wait_until(lambda: fired(events) and len(requests(events, "FindCoordinator")) > lookups,
                   tick=lambda: c.poll(0.05), message="a new FindCoordinator")
        c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        assert emu.describe_group(group).state == "Stable"
    finally:
        c.close()


# -- an applied but unanswered Produce: the idempotent producer's retry is deduplicated ------

def test_idempotent_producer_retry_after_close_after_leaves_one_record(kafka_emu_factory):
    events = []
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1}, observer=events.append)
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "enable.idempotence": True,
                  "acks": "all", "linger.ms": 0})
    p.list_topics(topic, timeout=10)  # settle metadata and the producer id first
    rule = emu.add_fault("close_after", api="Produce", topic=topic)
    delivered = []
    p.produce(topic, value=b"once", partition=0,
              on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert p.flush(30) == 0
    assert [err for err, _ in delivered] == [None]
    assert [e.action for e in fired(events)] == ["close_after"]
    assert len(requests(events, "Produce")) >= 2  # the applied one and the retry
    assert emu.faults()[0]["id"] == rule

    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("read"),
                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # read for a while: a duplicate would show up here
        got += [m.value() for m in c.consume(num_messages=10, timeout=0.1) if m.error() is None]
    c.close()
    assert got == [b"once"]


# -- a JoinGroup answered too late: the client gives up on it and joins again ------------------

def test_delayed_join_group_past_the_request_timeout_is_retried(kafka_emu_factory):
    events = []
    topic, group = unique("t"), unique("g")
    emu = kafka_emu_factory(topics={topic: 1}, observer=events.append)
    # kafka-python waits for a JoinGroup max(request_timeout_ms, max_poll_interval_ms + 5000)
    emu.add_fault("delay", api="JoinGroup", group_id=group, delay_ms=12000)
    c = kafka_python_consumer(emu, group, topic, request_timeout_ms=6500,
                              max_poll_interval_ms=1000)
    try:
        wait_until(lambda: c.assignment() and stable(emu, group),
                   tick=lambda: c.poll(timeout_ms=100), timeout=60,
                   message="the consumer to join after its delayed JoinGroup")
        assert [e.action for e in fired(events)] == ["delay"]
        joined = requests(events, "JoinGroup", group)
        assert joined, "no JoinGroup answered"
        # the delayed one was given up by the client (connection closed) and never answered
        assert all(e.correlation_id != fired(events)[0].correlation_id
                   or e.connection_id != fired(events)[0].connection_id for e in joined)
    finally:
        c.close()
