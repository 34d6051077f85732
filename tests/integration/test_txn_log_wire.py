"""Transactions over the wire, checked with encoders and decoders that are not ours: hand-built
transactional record batches (struct.pack, tests/log/txn_frames.py), control batches written
through the log's marker API, responses decoded by kafka-python's message classes (Fetch,
ListOffsets, Produce, TxnOffsetCommit, OffsetFetch) and TxnOffsetCommit requests encoded by them.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import pytest

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import FetchResponse as KpFetchResponse
from kafka.protocol.consumer import ListOffsetsResponse as KpListOffsetsResponse
from kafka.protocol.consumer import OffsetFetchResponse as KpOffsetFetchResponse
from kafka.protocol.producer import ProduceResponse as KpProduceResponse
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest as KpTxnReq
from kafka.protocol.producer.transaction import TxnOffsetCommitResponse as KpTxnResp
from kafka_emu.broker.server import serve
from kafka_emu.coordinator import CompleteTxnOffsets
from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import list_offsets as lo
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

sys.path.insert(0, str(Path(__file__).parents[1] / "log"))
from txn_frames import raw_batch, read_batches  # noqa: E402

NO_VERIFY = {"transaction.partition.verification.enable": "false"}


@pytest.fixture
def start(nursery):
    async def go(settings=None):
        bound = await nursery.start(partial(serve, make_config(settings, topics={"t": 1})))
        client = await WireClient.connect(bound.host, bound.port)
        return bound, client
    return go


def kp(cls, version, frame):
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True)


async def raw(client, api, version, body):
    await client.send(BY_NAME[api], version, body)
    return await client.receive_frame()


async def produce(client, records, *, txn_id="tx", version=9):
    body = pr.ProduceRequest(transactional_id=txn_id, acks=-1, timeout_ms=1000, topic_data=[
        pr.TopicProduceData(name="t", partition_data=[pr.PartitionProduceData(index=0,
                                                                             records=records)])])
    theirs = kp(KpProduceResponse, version, await raw(client, "Produce", version, body))
    (part,) = theirs.responses[0].partition_responses
    return part.error_code, part.base_offset


async def fetch(client, isolation, offset=0, version=12):
    body = f.FetchRequest(max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                          isolation_level=isolation, topics=[f.FetchTopic(
                              topic="t", partitions=[f.FetchPartition(
                                  partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])])
    theirs = kp(KpFetchResponse, version, await raw(client, "Fetch", version, body))
    return theirs.responses[0].partitions[0]


async def latest(client, isolation, version=5):
    body = lo.ListOffsetsRequest(replica_id=-1, isolation_level=isolation, topics=[
        lo.ListOffsetsTopic(name="t", partitions=[lo.ListOffsetsPartition(
            partition_index=0, timestamp=-1)])])
    theirs = kp(KpListOffsetsResponse, version, await raw(client, "ListOffsets", version, body))
    return theirs.topics[0].partitions[0].offset


async def test_read_committed_fetch_lso_and_aborted_list_as_kafka(start):
    bound, client = await start(NO_VERIFY)
    log = bound.broker.topics.partition("t", 0)
    assert await produce(client, raw_batch([b"a0", b"a1"], pid=5, epoch=0, seq=0,
                                           transactional=True)) == (E.NONE, 0)
    assert await produce(client, raw_batch([b"plain"])) == (E.NONE, 2)
    assert log.append_marker(producer_id=5, producer_epoch=1, coordinator_epoch=0,
                             commit=False, now_ms=0) == 3
    assert await produce(client, raw_batch([b"open"], pid=6, epoch=0, seq=0,
                                           transactional=True)) == (E.NONE, 4)
    assert await produce(client, raw_batch([b"late"])) == (E.NONE, 5)

    committed = await fetch(client, 1)
    assert (committed.high_watermark, committed.last_stable_offset) == (6, 4)
    assert [(a.producer_id, a.first_offset) for a in committed.aborted_transactions] == [(5, 0)]
    batches = read_batches(bytes(committed.records))
    assert [b.base_offset for b in batches] == [0, 2, 3]
    marker = batches[-1]
    assert marker.is_control_batch and not next(iter(marker)).commit
    uncommitted = await fetch(client, 0)
    assert uncommitted.aborted_transactions is None and uncommitted.last_stable_offset == 4
    assert [b.base_offset for b in read_batches(bytes(uncommitted.records))] == [0, 2, 3, 4, 5]
    at_lso = await fetch(client, 1, offset=4)
    assert at_lso.aborted_transactions == [] and not at_lso.records

    assert await latest(client, 1) == 4 and await latest(client, 0) == 6
    log.append_marker(producer_id=6, producer_epoch=1, coordinator_epoch=0, commit=True,
                      now_ms=0)
    assert await latest(client, 1) == 7


async def test_produce_checks_for_transactional_batches(start):
    bound, client = await start(NO_VERIFY)
    log = bound.broker.topics.partition("t", 0)
    txn = raw_batch([b"x"], pid=5, epoch=2, seq=0, transactional=True)
    # no transactional id: the whole request (KafkaApis.handleProduceRequest)
    assert await produce(client, txn, txn_id=None) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert await produce(client, txn) == (E.NONE, 0)
    # a plain batch from a producer whose transaction is open
    assert (await produce(client, raw_batch([b"y"], pid=5, epoch=2, seq=1)))[0] == \
        E.INVALID_TXN_STATE
    log.append_marker(producer_id=5, producer_epoch=3, coordinator_epoch=0, commit=True,
                      now_ms=0)
    # a zombie from the epoch before the (transactions v2) bump
    stale = raw_batch([b"z"], pid=5, epoch=2, seq=1, transactional=True)
    assert (await produce(client, stale))[0] == E.INVALID_PRODUCER_EPOCH
    assert log.high_watermark == 2


async def test_transactional_produce_is_verified_with_the_transaction_coordinator(start):
    bound, client = await start()
    if getattr(getattr(bound.broker, "transactions", None), "verify_partition", None) is None:
        pytest.skip("the transaction coordinator has no verify_partition yet")
    txn = raw_batch([b"x"], pid=5, epoch=0, seq=0, transactional=True)
    error, _ = await produce(client, txn, txn_id="never-initialised")
    assert error in (E.INVALID_PRODUCER_ID_MAPPING, E.INVALID_TXN_STATE)
    assert bound.broker.topics.partition("t", 0).high_watermark == 0


async def txn_offset_commit(client, version, *, gen=-1, member="", epoch=0, offset=5):
    req = KpTxnReq(transactional_id="tx", group_id="g", producer_id=7, producer_epoch=epoch,
                   generation_id=gen, member_id=member, group_instance_id=None, topics=[
                       KpTxnReq.TxnOffsetCommitRequestTopic(name="t", partitions=[
                           KpTxnReq.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                               partition_index=0, committed_offset=offset,
                               committed_leader_epoch=-1, committed_metadata="m")]),
                       KpTxnReq.TxnOffsetCommitRequestTopic(name="missing", partitions=[
                           KpTxnReq.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                               partition_index=0, committed_offset=1,
                               committed_leader_epoch=-1, committed_metadata=None)])])
    req.with_header(correlation_id=99, client_id="kp")
    await client.send_raw(bytes(req.encode(version=version, header=True, framed=True)))
    theirs = kp(KpTxnResp, version, await client.receive_frame())
    return {(t.name, p.partition_index): p.error_code for t in theirs.topics
            for p in t.partitions}


async def offset_fetch(client, stable, version=7):
    body = of.OffsetFetchRequest(group_id="g", require_stable=stable, topics=[
        of.OffsetFetchRequestTopic(name="t", partition_indexes=[0])])
    theirs = kp(KpOffsetFetchResponse, version, await raw(client, "OffsetFetch", version, body))
    (part,) = theirs.topics[0].partitions
    return part.committed_offset, part.error_code


@pytest.mark.parametrize("version", [0, 2, 3, 4, 5])
async def test_txn_offset_commit_pending_until_the_commit_marker(start, version):
    bound, client = await start(NO_VERIFY)
    errors = await txn_offset_commit(client, version)
    assert errors == {("t", 0): E.NONE, ("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert await offset_fetch(client, stable=False) == (-1, E.NONE)
    assert await offset_fetch(client, stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    bound.broker.coordinator.handle(CompleteTxnOffsets(
        request_id=-1, group_id="g", producer_id=7, committed=True), bound.broker.now_ms())
    assert await offset_fetch(client, stable=True) == (5, E.NONE)
    # an older producer epoch is refused by the group's offsets partition
    assert (await txn_offset_commit(client, version, epoch=0))[("t", 0)] == E.NONE
    bound.broker.coordinator.handle(CompleteTxnOffsets(
        request_id=-1, group_id="g", producer_id=7, committed=False, producer_epoch=3),
        bound.broker.now_ms())
    assert (await txn_offset_commit(client, version, epoch=2))[("t", 0)] == \
        E.INVALID_PRODUCER_EPOCH
    assert await offset_fetch(client, stable=True) == (5, E.NONE)


async def test_txn_offset_commit_v3_fences_by_generation(start):
    _, client = await start(NO_VERIFY)
    assert (await txn_offset_commit(client, 3, gen=4, member="zombie"))[("t", 0)] == \
        E.ILLEGAL_GENERATION  # no such group: Kafka answers ILLEGAL_GENERATION


async def test_txn_offset_commit_outside_a_transaction_is_refused_by_verification(start):
    bound, client = await start()  # transaction.partition.verification.enable: default true
    if getattr(getattr(bound.broker, "transactions", None), "verify_group", None) is None:
        pytest.skip("the transaction coordinator has no verify_group yet")
    errors = await txn_offset_commit(client, 3)  # "tx" was never initialised
    assert errors[("t", 0)] in (E.INVALID_PRODUCER_ID_MAPPING, E.INVALID_TXN_STATE)
    assert errors[("missing", 0)] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert await offset_fetch(client, stable=True) == (-1, E.NONE)  # nothing pending


async def init_producer(client, txn_id):
    from kafka_emu.protocol.messages import init_producer_id as ip
    response = await client.request(BY_NAME["InitProducerId"], 4, ip.InitProducerIdRequest(
        transactional_id=txn_id, transaction_timeout_ms=60_000))
    assert response.error_code == E.NONE
    return response.producer_id, response.producer_epoch


@pytest.mark.parametrize("version, error", [(9, E.INVALID_TXN_STATE),
                                            (11, E.TRANSACTION_ABORTABLE)])
async def test_transactional_produce_to_a_partition_not_added(start, version, error):
    """Transactions v1 (Produce below v12): the partition must have been added with
    AddPartitionsToTxn; the coordinator's TRANSACTION_ABORTABLE reaches v11+ as it is and older
    versions as INVALID_TXN_STATE (AddPartitionsToTxnManager)."""
    bound, client = await start()
    if getattr(getattr(bound.broker, "transactions", None), "verify_partition", None) is None:
        pytest.skip("the transaction coordinator has no verify_partition yet")
    pid, epoch = await init_producer(client, "tx-v1")
    batch = raw_batch([b"x"], pid=pid, epoch=epoch, seq=0, transactional=True)
    assert (await produce(client, batch, txn_id="tx-v1", version=version))[0] == error
    assert bound.broker.topics.partition("t", 0).high_watermark == 0


async def test_transactions_v2_produce_adds_the_partition(start):
    """Produce v12 (KIP-890 part 2): the partition joins the transaction through the produce
    itself; a producer the partition knows nothing of must start at sequence 0."""
    bound, client = await start()
    if getattr(getattr(bound.broker, "transactions", None), "add_partition_implicitly",
               None) is None:
        pytest.skip("the transaction coordinator has no add_partition_implicitly yet")
    pid, epoch = await init_producer(client, "tx-v2")
    late = raw_batch([b"x"], pid=pid, epoch=epoch, seq=5, transactional=True)
    assert (await produce(client, late, txn_id="tx-v2", version=12))[0] == \
        E.OUT_OF_ORDER_SEQUENCE_NUMBER
    first = raw_batch([b"x"], pid=pid, epoch=epoch, seq=0, transactional=True)
    assert await produce(client, first, txn_id="tx-v2", version=12) == (E.NONE, 0)
    log = bound.broker.topics.partition("t", 0)
    assert log.has_ongoing_transaction(pid, epoch) and log.last_stable_offset == 0
