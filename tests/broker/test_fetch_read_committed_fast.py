"""A read_committed Fetch (librdkafka's default) of a log with no transaction open or aborted is
answered by the fetch handler's inline read (handlers/fetch.py, ``_read_all``): its answer must
be ``_read_one``'s -- the reference, which reads through ``read_committed`` -- for every offset
and size limit, and a log with an aborted transaction still reports it."""

import pytest

from kafka_emu.broker.handlers.fetch import _read_one
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing.wire import WireClient

PRODUCE, FETCH = BY_NAME["Produce"], BY_NAME["Fetch"]


def _produce(count: int):
    return pr.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
        name="t", partition_data=[pr.PartitionProduceData(index=0, records=build_batch(
            [Record(value=b"v" * 30, timestamp_ms=1000)] * count))])])


def _fetch(offset: int, limit: int, isolation_level: int = 1):
    return f.FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                          isolation_level=isolation_level, topics=[f.FetchTopic(
                              topic="t", partitions=[f.FetchPartition(
                                  partition=0, fetch_offset=offset, partition_max_bytes=limit)])])


@pytest.mark.parametrize("limit", [1, 150, 1 << 20])
async def test_read_committed_without_transactions_answers_as_read_committed_reads(
        start_broker, limit):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    for count in (1, 3, 2, 5):  # batches at offsets 0, 1, 4, 6; high watermark 11
        await client.request(PRODUCE, 9, _produce(count))
    log = bound.broker.topics.catalogue.partition("t", 0)
    for offset in (0, 1, 4, 6, 11):
        request = _fetch(offset, limit)
        got = (await client.request(FETCH, 12, request)).responses[0].partitions[0]
        want, _ = _read_one(log, request.topics[0].partitions[0], True, limit, True)
        assert got == want
        assert got.aborted_transactions == []  # read_committed: a list, empty
        uncommitted = (await client.request(FETCH, 12, _fetch(offset, limit, 0)))
        assert uncommitted.responses[0].partitions[0].aborted_transactions is None
        assert uncommitted.responses[0].partitions[0].records == got.records
