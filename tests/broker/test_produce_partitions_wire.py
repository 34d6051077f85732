"""One Produce of many partitions over a real socket: the handler looks each partition's log up
by index in its topic and builds each answer in its class's mutable twin (produce.py); the log
reads the batch header by index. Each partition's answer must be as Kafka's: its offset, the
catalogue's error for an index out of range (negative or past the end) or an unknown topic, and
the same answers when the answer is built by the class itself (the twin fallback)."""

from __future__ import annotations

import pytest

from kafka_emu.broker.handlers import produce as produce_handler
from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing.wire import WireClient

PRODUCE = BY_NAME["Produce"]
INDEXES = [0, 2, 3, -1, 4, 2]  # 4 partitions: -1 and 4 are out of range; 2 twice


def _batch(n: int) -> bytes:
    return build_batch([Record(key=b"k", value=b"v%d" % i, timestamp_ms=1000 + i)
                        for i in range(n)])


def _request(records: bytes) -> pr.ProduceRequest:
    return pr.ProduceRequest(acks=1, timeout_ms=1000, topic_data=[
        pr.TopicProduceData(name="t", partition_data=[
            pr.PartitionProduceData(index=i, records=records) for i in INDEXES]),
        pr.TopicProduceData(name="nope", partition_data=[
            pr.PartitionProduceData(index=0, records=records)])])


def _answers(response) -> list[tuple]:
    return [(t.name, p.index, p.error_code, p.base_offset, p.log_append_time_ms,
             p.log_start_offset) for t in response.responses for p in t.partition_responses]


@pytest.mark.parametrize("twin", [True, False], ids=["twin", "class"])
async def test_each_partition_of_one_produce_gets_its_own_answer(start_broker, monkeypatch,
                                                                 twin):
    if not twin:
        monkeypatch.setattr(produce_handler, "_Building", None)
    bound = await start_broker({"auto.create.topics.enable": "false"}, topics={"t": 4})
    client = await WireClient.connect(bound.host, bound.port)
    unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    first = await client.request(PRODUCE, 9, _request(_batch(3)))
    assert _answers(first) == [
        ("t", 0, 0, 0, -1, 0), ("t", 2, 0, 0, -1, 0), ("t", 3, 0, 0, -1, 0),
        ("t", -1, unknown, -1, -1, -1), ("t", 4, unknown, -1, -1, -1),
        ("t", 2, 0, 3, -1, 0),  # the second batch of partition 2 follows the first
        ("nope", 0, unknown, -1, -1, -1)]
    second = await client.request(PRODUCE, 9, _request(_batch(2)))
    assert [a[3] for a in _answers(second)] == [3, 6, 3, -1, -1, 8, -1]
    for response in (first, second):
        for t in response.responses:
            for p in t.partition_responses:
                assert type(p) is pr.PartitionProduceResponse
                assert p.record_errors == [] and p.current_leader == pr.LeaderIdAndEpoch()
    await client.aclose()
