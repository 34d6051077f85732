"""kafka-python 3's admin client over the transaction admin APIs (KIP-664) in a three-broker
cluster: ListTransactions sharded to every broker (each lists the ids it coordinates),
DescribeTransactions routed to each id's coordinator through FindCoordinator, DescribeProducers
on the partition leader showing where an open transaction starts."""

from __future__ import annotations

from confluent_kafka import Producer
from kafka import TopicPartition
from kafka.admin import KafkaAdminClient

from .helpers import unique
from .test_transactions_confluent import TIMEOUT


def test_list_describe_and_producers(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1}, brokers=3)
    ids = [unique("tx") for _ in range(4)]
    producers = []
    for n, tid in enumerate(ids):
        p = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": tid})
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
        p.produce(topic, value=b"v%d" % n, partition=0)
        if n % 2:
            p.commit_transaction(TIMEOUT)
        else:
            p.flush(TIMEOUT)  # left open
        producers.append(p)
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers,
                             request_timeout_ms=int(TIMEOUT * 1000))
    try:
        by_broker = admin.list_transactions()
        assert set(by_broker) == {1, 2, 3}
        listed = {t.transactional_id: t for found in by_broker.values() for t in found}
        for node, found in by_broker.items():  # each broker lists the ids it coordinates
            for t in found:
                assert admin.describe_transactions([t.transactional_id])[
                    t.transactional_id].coordinator_id == node
        assert {tid: listed[tid].state.value for tid in ids} == {
            ids[0]: "Ongoing", ids[1]: "CompleteCommit", ids[2]: "Ongoing",
            ids[3]: "CompleteCommit"}
        ongoing = admin.list_transactions(state_filters=["Ongoing"])
        assert {t.transactional_id for found in ongoing.values() for t in found} == {
            ids[0], ids[2]}

        described = admin.describe_transactions([ids[0], ids[1]])
        assert described[ids[0]].state.value == "Ongoing"
        assert described[ids[0]].topic_partitions == {TopicPartition(topic, 0)}
        assert described[ids[0]].producer_id == listed[ids[0]].producer_id
        assert described[ids[1]].topic_partitions == set()

        states = admin.describe_producers([TopicPartition(topic, 0)])
        active = states[TopicPartition(topic, 0)].active_producers
        open_pids = {listed[ids[0]].producer_id, listed[ids[2]].producer_id}
        assert {s.producer_id for s in active if s.current_transaction_start_offset >= 0} \
            == open_pids
        assert len(active) == 4
    finally:
        admin.close()


def test_admin_aborts_a_hanging_transaction_with_write_txn_markers(kafka_emu_factory):
    from kafka.admin import AbortTransactionSpec
    from .test_transactions_confluent import committed_values
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1})
    hanging = Producer({"bootstrap.servers": emu.bootstrap_servers,
                        "transactional.id": unique("tx")})
    hanging.init_transactions(TIMEOUT)
    hanging.begin_transaction()
    hanging.produce(topic, value=b"hanging", partition=0)
    hanging.flush(TIMEOUT)
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers,
                             request_timeout_ms=int(TIMEOUT * 1000))
    try:
        (state,) = admin.describe_producers([tp])[tp].active_producers
        assert state.current_transaction_start_offset == 0
        admin.abort_transaction(AbortTransactionSpec(
            topic_partition=tp, producer_id=state.producer_id,
            producer_epoch=state.producer_epoch, coordinator_epoch=state.coordinator_epoch))
        (after,) = admin.describe_producers([tp])[tp].active_producers
        assert after.current_transaction_start_offset == -1
    finally:
        admin.close()
    # the partition's LSO moved past the aborted record: a later transaction is readable
    other = Producer({"bootstrap.servers": emu.bootstrap_servers, "transactional.id": unique("tx")})
    other.init_transactions(TIMEOUT)
    other.begin_transaction()
    other.produce(topic, value=b"after", partition=0)
    other.commit_transaction(TIMEOUT)
    assert committed_values(emu, topic, 1) == [b"after"]
