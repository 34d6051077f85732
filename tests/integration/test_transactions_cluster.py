"""Transactions in a three-broker cluster: the transaction coordinator is the leader of the
transactional id's ``__transaction_state`` partition (FindCoordinator key type 1 names it; the
other brokers answer NOT_COORDINATOR), and moving that partition's leader moves the
coordinator -- confluent-kafka's producer finds the new one and goes on. Fault rules inject
the retriable errors a transactional client must survive."""

from __future__ import annotations

import socket

from confluent_kafka import Producer
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from kafka_emu.broker.txn_routing import partition_for

from .helpers import unique
from .test_transactions_confluent import TIMEOUT, committed_values


def run_transaction(p: Producer, topic: str, value: bytes) -> None:
    p.begin_transaction()
    p.produce(topic, value=value, partition=0)
    p.commit_transaction(TIMEOUT)


def ask(port: int, req, version: int, response_cls):
    """One request to one broker, encoded and decoded by kafka-python's classes."""
    req.with_header(correlation_id=1, client_id="txn-cluster")
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(req.encode(version=version, header=True, framed=True))
        size = int.from_bytes(sock.recv(4, socket.MSG_WAITALL), "big")
        frame = sock.recv(size, socket.MSG_WAITALL)
    return response_cls.decode(frame, version=version, header=True)


def find_transaction_coordinator(port: int, tid: str) -> tuple[int, int]:
    resp = ask(port, FindCoordinatorRequest(key=tid, key_type=1), 3, FindCoordinatorResponse)
    return resp.error_code, resp.node_id


def test_coordinator_is_the_transaction_state_leader_and_moves_with_it(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1}, brokers=3)
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": tid})
    p.init_transactions(TIMEOUT)
    run_transaction(p, topic, b"one")
    part = partition_for(tid, 50)
    leader = emu.partition("__transaction_state", part)["leader"]
    for node in emu.brokers():  # every broker names the partition's leader
        assert find_transaction_coordinator(node["port"], tid) == (0, leader)
        if node["node_id"] != leader:  # only the coordinator answers for the id (asking the
            # coordinator itself would bump the epoch and fence our producer)
            init = ask(node["port"], InitProducerIdRequest(
                transactional_id=tid, transaction_timeout_ms=60_000, producer_id=-1,
                producer_epoch=-1), 4, InitProducerIdResponse)
            assert init.error_code == 16  # NOT_COORDINATOR
    other = next(n for n in (1, 2, 3) if n != leader)
    moved = emu.move_leader("__transaction_state", part, to=other)
    assert moved["leader"] == other
    run_transaction(p, topic, b"two")  # NOT_COORDINATOR from the old one, then the new one
    assert committed_values(emu, topic, 2) == [b"one", b"two"]


def test_retriable_coordinator_errors_are_survived(kafka_emu_factory):
    topic, tid = unique("t"), unique("tx")
    emu = kafka_emu_factory(topics={topic: 1})
    emu.add_fault("error", api="InitProducerId", error="COORDINATOR_LOAD_IN_PROGRESS")
    emu.add_fault("error", api="EndTxn", error="CONCURRENT_TRANSACTIONS")
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": tid})
    p.init_transactions(TIMEOUT)
    run_transaction(p, topic, b"once")
    assert [(f["match"]["api"], f["fired"]) for f in emu.faults()] == [
        ("InitProducerId", 1), ("EndTxn", 1)]
    assert committed_values(emu, topic, 1) == [b"once"]
