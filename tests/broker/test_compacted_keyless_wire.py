"""Keyless records on a compacted topic (issue #33): Kafka's LogValidator.validateKey refuses each
record without a key, so Produce answers INVALID_RECORD for the partition and, from v8 (KIP-467),
names every such record in RecordErrors under one summary ErrorMessage. kafka-emu took them.
"""

from __future__ import annotations

import pytest

from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol.messages import create_topics as ct
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.registry import BY_NAME
from kafka_emu.testing.wire import WireClient

PRODUCE = BY_NAME["Produce"]
CREATE_TOPICS = BY_NAME["CreateTopics"]


async def create(client: WireClient, name: str, policy: str) -> None:
    r = await client.request(CREATE_TOPICS, 7, ct.CreateTopicsRequest(topics=[ct.CreatableTopic(
        name=name, num_partitions=1, replication_factor=1, assignments=[],
        configs=[ct.CreatableTopicConfig(name="cleanup.policy", value=policy)])]))
    assert r.topics[0].error_code == ErrorCode.NONE


async def produce(client: WireClient, topic: str, keys, version: int = 9):
    blob = build_batch([Record(key=k, value=b"v", timestamp_ms=1000) for k in keys])
    r = await client.request(PRODUCE, version, pr.ProduceRequest(
        acks=-1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
            name=topic, partition_data=[pr.PartitionProduceData(index=0, records=blob)])]))
    return r.responses[0].partition_responses[0]


@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
async def test_keyless_records_on_compacted_topic_are_invalid_record(start_broker, policy):
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    await create(client, "c", policy)
    part = await produce(client, "c", [b"k", None, b"k", None, None, None])
    assert part.error_code == ErrorCode.INVALID_RECORD and part.base_offset == -1
    why = "Compacted topic cannot accept message without key in topic partition c-0"
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
        (1, why), (3, why), (4, why), (5, why)]
    assert part.error_message == (
        "One or more records have been rejected due to 4 record errors in total, and only "
        f"showing the first three errors at most: [RecordError(batchIndex=1, message='{why}'), "
        f"RecordError(batchIndex=3, message='{why}'), RecordError(batchIndex=4, message='{why}')]")
    # Nothing of the refused batch was appended; keyed records (an empty key is a key) are.
    part = await produce(client, "c", [b"k", b""])
    assert (part.error_code, part.base_offset) == (ErrorCode.NONE, 0)


async def test_keyless_records_before_v8_get_the_code_alone(start_broker):
    bound = await start_broker()
    client = await WireClient.connect(bound.host, bound.port)
    await create(client, "c", "compact")
    part = await produce(client, "c", [None], version=7)
    assert part.error_code == ErrorCode.INVALID_RECORD


async def test_keyless_records_on_a_delete_topic_are_taken(start_broker):
    bound = await start_broker(topics={"d": 1})
    client = await WireClient.connect(bound.host, bound.port)
    part = await produce(client, "d", [None, None])
    assert (part.error_code, part.base_offset) == (ErrorCode.NONE, 0)
