"""What a transactional client is told after the broker coordinating its transactional id stops,
as Kafka tells it (the question behind kafka-python's copier stall in the transactions
catalogue): the stopped broker refuses connections; every live broker answers FindCoordinator
(key type 1, TRANSACTION) with the new leader of the id's ``__transaction_state`` partition, a
live broker listed in Metadata; Metadata lists only the live brokers, and every partition is led
by one of them; the new coordinator serves the id (InitProducerId), the others answer
NOT_COORDINATOR. Encoded and decoded by kafka-python's protocol classes, over real sockets.
Regression: ``__transaction_state`` was placed with default.replication.factor (1), so stopping
its leader left the id with no coordinator (leader -1) until the broker came back; Kafka's
transaction.state.log.replication.factor is 3.
"""

from __future__ import annotations

import socket

import pytest
from kafka.protocol.metadata import (FindCoordinatorRequest, FindCoordinatorResponse,
                                     MetadataRequest, MetadataResponse)
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from kafka_emu.broker.txn_routing import partition_for

from .helpers import unique
from .test_transactions_cluster import ask

NOT_COORDINATOR = 16


def metadata(port: int, topic: str):
    return ask(port, MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                     allow_auto_topic_creation=False), 12, MetadataResponse)


def test_after_the_coordinator_stops_every_live_broker_names_a_live_coordinator(
        kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 3}, brokers=3)
    part = partition_for(tid, 50)
    ports = {b["node_id"]: b["port"] for b in emu.brokers()}
    first = ask(ports[1], FindCoordinatorRequest(key=tid, key_type=1), 3,
                FindCoordinatorResponse)  # creates __transaction_state, as Kafka does
    old = emu.partition("__transaction_state", part)["leader"]
    assert (first.error_code, first.node_id) == (0, old)
    emu.stop_broker(old)

    with pytest.raises(ConnectionRefusedError):  # what the client meets first: ECONNREFUSED
        socket.create_connection(("127.0.0.1", ports[old]), timeout=10).close()
    new = emu.partition("__transaction_state", part)["leader"]
    live = {n: p for n, p in ports.items() if n != old}
    assert new in live
    for node, port in live.items():
        found = ask(port, FindCoordinatorRequest(key=tid, key_type=1), 3,
                    FindCoordinatorResponse)
        assert (found.error_code, found.node_id, found.port) == (0, new, live[new])
        md = metadata(port, topic)
        assert sorted(b.node_id for b in md.brokers) == sorted(live)
        (t,) = md.topics
        assert t.error_code == 0 and {p.leader_id for p in t.partitions} <= set(live)
        init = ask(port, InitProducerIdRequest(
            transactional_id=tid, transaction_timeout_ms=60_000, producer_id=-1,
            producer_epoch=-1), 4, InitProducerIdResponse)
        assert init.error_code == (0 if node == new else NOT_COORDINATOR)
