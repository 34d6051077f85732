"""Produce over a real socket: the log append time is read only for a LogAppendTime topic (the
handler reads the clock lazily), and then it is what the answer and the stored batch carry."""

from __future__ import annotations

import struct

from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import create_topics as ct
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.testing.wire import WireClient

PRODUCE, FETCH, CREATE = BY_NAME["Produce"], BY_NAME["Fetch"], BY_NAME["CreateTopics"]


def _produce(topic: str) -> pr.ProduceRequest:
    blob = build_batch([Record(key=b"k", value=b"v", timestamp_ms=1_000 + i) for i in range(3)])
    return pr.ProduceRequest(acks=1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
        name=topic, partition_data=[pr.PartitionProduceData(index=0, records=blob)])])


async def test_log_append_time_is_stamped_only_on_a_log_append_time_topic(start_broker):
    bound = await start_broker(topics={"create": 1})
    client = await WireClient.connect(bound.host, bound.port)
    made = await client.request(CREATE, 5, ct.CreateTopicsRequest(topics=[ct.CreatableTopic(
        name="append", num_partitions=1, replication_factor=1, assignments=[],
        configs=[ct.CreatableTopicConfig(name="message.timestamp.type", value="LogAppendTime")])],
        timeout_ms=5000, validate_only=False))
    assert made.topics[0].error_code == ErrorCode.NONE

    answers = {}
    for topic in ("create", "append", "create", "append"):
        answer = await client.request(PRODUCE, 9, _produce(topic))
        answers.setdefault(topic, []).append(answer.responses[0].partition_responses[0])
    assert [(p.error_code, p.base_offset, p.log_append_time_ms) for p in answers["create"]] \
        == [(0, 0, -1), (0, 3, -1)]
    stamps = [p.log_append_time_ms for p in answers["append"]]
    assert [(p.error_code, p.base_offset) for p in answers["append"]] == [(0, 0), (0, 3)]
    assert all(s > 1_000_000 for s in stamps) and stamps[0] <= stamps[1]

    fetched = await client.request(FETCH, 12, f.FetchRequest(
        max_wait_ms=0, min_bytes=0, topics=[f.FetchTopic(topic="append", partitions=[
            f.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
    records = bytes(fetched.responses[0].partitions[0].records)
    # the stored batches: attributes bit 3 set, maxTimestamp the stamp the answer gave
    first_len = struct.unpack_from(">i", records, 8)[0] + 12
    for pos, stamp in ((0, stamps[0]), (first_len, stamps[1])):
        attributes, = struct.unpack_from(">h", records, pos + 21)
        max_timestamp, = struct.unpack_from(">q", records, pos + 35)
        assert attributes & 0x08 and max_timestamp == stamp
    await client.aclose()
