"""The data path over real sockets with trio's clock: long-poll Fetch, Produce, ListOffsets,
Metadata and Produce auto-creation."""

import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch, decode_records
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import delete_records as dr
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import list_offsets as lo
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest
from kafka_emu.testing.wire import WireClient

PRODUCE, FETCH, LIST_OFFSETS = BY_NAME["Produce"], BY_NAME["Fetch"], BY_NAME["ListOffsets"]
METADATA, API_VERSIONS = BY_NAME["Metadata"], BY_NAME["ApiVersions"]
DELETE_RECORDS = BY_NAME["DeleteRecords"]


def produce_request(records_blob, acks=-1, topic="t", partition=0):
    return pr.ProduceRequest(acks=acks, timeout_ms=1000, topic_data=[pr.TopicProduceData(
        name=topic, partition_data=[pr.PartitionProduceData(index=partition,
                                                            records=records_blob)])])


def fetch_request(offset=0, max_wait_ms=10_000, min_bytes=1, topic="t"):
    return f.FetchRequest(max_wait_ms=max_wait_ms, min_bytes=min_bytes, topics=[f.FetchTopic(
        topic=topic, partitions=[f.FetchPartition(partition=0, fetch_offset=offset,
                                                  partition_max_bytes=1 << 20)])])


def batch(*values):
    return build_batch([Record(value=v, key=b"k", timestamp_ms=1000 + i)
                        for i, v in enumerate(values)])


def _timed_fetch(consumer, result):
    """A long-polling Fetch (10 s max wait) to start in a nursery; it leaves its response and
    how long it waited in ``result``."""
    async def poll():
        start = trio.current_time()
        result["resp"] = await consumer.request(FETCH, 12, fetch_request(max_wait_ms=10_000))
        result["waited"] = trio.current_time() - start
    return poll


async def test_long_poll_fetch_returns_as_soon_as_a_produce_arrives(start_broker, autojump_clock):
    bound = await start_broker(topics={"t": 1})
    consumer = await WireClient.connect(bound.host, bound.port)
    producer = await WireClient.connect(bound.host, bound.port)
    result = {}
    poll = _timed_fetch(consumer, result)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(2)
        produced = await producer.request(PRODUCE, 9, produce_request(batch(b"a", b"b")))
        assert produced.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    assert 2 <= result["waited"] < 2.5  # woken by the produce, not by the 10 s timeout
    part = result["resp"].responses[0].partitions[0]
    assert part.high_watermark == 2
    assert [r.value for r in decode_records(part.records)] == [b"a", b"b"]


async def test_long_poll_fetch_is_woken_only_by_a_produce_to_a_partition_it_reads(
        start_broker, autojump_clock, monkeypatch):
    # wake-ups are per partition (issue 40): a Produce to another topic or partition leaves a
    # waiting Fetch asleep (it does not even re-read); one to its own partition answers it; no
    # watch outlives its fetch
    from kafka_emu.broker.handlers import fetch as fetch_handler
    reads = []
    read_all, read_changed = fetch_handler._read_all, fetch_handler._read_changed
    monkeypatch.setattr(fetch_handler, "_read_all",
                        lambda *args: reads.append("all") or read_all(*args))
    monkeypatch.setattr(fetch_handler, "_read_changed",
                        lambda *args: reads.append("changed") or read_changed(*args))
    bound = await start_broker(topics={"t": 2, "u": 1})
    consumer = await WireClient.connect(bound.host, bound.port)
    producer = await WireClient.connect(bound.host, bound.port)
    result = {}
    poll = _timed_fetch(consumer, result)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(1)
        for topic, partition in (("u", 0), ("t", 1)):
            answer = await producer.request(PRODUCE, 9, produce_request(
                batch(b"elsewhere"), topic=topic, partition=partition))
            assert answer.responses[0].partition_responses[0].error_code == ErrorCode.NONE
        await trio.sleep(2)
        assert "resp" not in result  # still waiting
        assert bound.broker.topics._watches  # its partition is watched meanwhile
        await producer.request(PRODUCE, 9, produce_request(batch(b"mine")))
    assert 3 <= result["waited"] < 3.5
    part = result["resp"].responses[0].partitions[0]
    assert [r.value for r in decode_records(part.records)] == [b"mine"]
    # the first read, and the one its own partition's append woke: of that partition alone
    assert reads == ["all", "changed"]
    assert bound.broker.topics._watches == {}


async def test_long_poll_fetch_woken_below_min_bytes_still_answers_at_its_first_deadline(
        start_broker, autojump_clock):
    # each wake-up re-reads and waits on to the same deadline (max_wait_ms from the request),
    # not max_wait_ms from the last append; at the deadline it answers what is there
    bound = await start_broker(topics={"t": 1})
    consumer = await WireClient.connect(bound.host, bound.port)
    producer = await WireClient.connect(bound.host, bound.port)
    result = {}

    async def poll():
        start = trio.current_time()
        result["resp"] = await consumer.request(FETCH, 12, fetch_request(max_wait_ms=3000,
                                                                         min_bytes=1 << 20))
        result["waited"] = trio.current_time() - start

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        for value in (b"a", b"b"):
            await trio.sleep(1)
            await producer.request(PRODUCE, 9, produce_request(batch(value)))
    assert 3 <= result["waited"] < 3.5
    part = result["resp"].responses[0].partitions[0]
    assert part.high_watermark == 2
    assert len(part.records) == 2 * len(batch(b"a"))  # both batches, whole


async def test_long_poll_fetch_without_data_waits_max_wait(start_broker, autojump_clock):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    start = trio.current_time()
    resp = await client.request(FETCH, 12, fetch_request(max_wait_ms=3000))
    assert 3 <= trio.current_time() - start < 3.5
    part = resp.responses[0].partitions[0]
    assert (part.error_code, part.records, part.high_watermark) == (0, b"", 0)


async def test_fetch_out_of_range_answers_at_once(start_broker, autojump_clock):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    start = trio.current_time()
    resp = await client.request(FETCH, 12, fetch_request(offset=5))
    assert trio.current_time() - start < 0.1
    assert resp.responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


async def test_produce_rejects_a_corrupt_batch_and_acks_0_gets_no_answer(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    bad = bytearray(batch(b"x"))
    bad[-1] ^= 0xFF  # flips a value bit: the CRC-32C no longer matches
    resp = await client.request(PRODUCE, 9, produce_request(bytes(bad)))
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.CORRUPT_MESSAGE
    await client.send(PRODUCE, 9, produce_request(batch(b"y"), acks=0))
    corr = await client.send(API_VERSIONS, 0, ApiVersionsRequest())
    assert (await client.receive(API_VERSIONS, 0, corr)).error_code == 0  # next answer is this
    offsets = await client.request(LIST_OFFSETS, 7, lo.ListOffsetsRequest(
        replica_id=-1, topics=[lo.ListOffsetsTopic(name="t", partitions=[
            lo.ListOffsetsPartition(partition_index=0, timestamp=-1),
        ])]))
    assert offsets.topics[0].partitions[0].offset == 1  # the acks=0 batch was appended


def offsets_request(*asks, version=7):
    """ListOffsets for (topic, partition, timestamp) triples, one topic entry each."""
    return lo.ListOffsetsRequest(replica_id=-1, topics=[
        lo.ListOffsetsTopic(name=topic, partitions=[
            lo.ListOffsetsPartition(partition_index=partition, timestamp=timestamp)])
        for topic, partition, timestamp in asks])


async def test_list_offsets_answers_a_partition_named_twice_once_with_invalid_request(
        start_broker):
    # ReplicaManager.fetchOffset: every copy of a duplicated partition is INVALID_REQUEST and the
    # answers are collected by partition, then grouped by topic.
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(PRODUCE, 9, produce_request(batch(b"a", b"b")))
    resp = await client.request(LIST_OFFSETS, 7, offsets_request(
        ("t", 0, -1), ("t", 1, -1), ("t", 0, -2), ("nope", 0, -1), ("nope", 0, -1)))
    assert [(t.name, [(p.partition_index, p.error_code, p.offset) for p in t.partitions])
            for t in resp.topics] == [
        ("t", [(0, ErrorCode.INVALID_REQUEST, -1), (1, ErrorCode.NONE, 0)]),
        ("nope", [(0, ErrorCode.INVALID_REQUEST, -1)]),
    ]
    again = await client.request(LIST_OFFSETS, 7, offsets_request(("t", 0, -1)))
    assert again.topics[0].partitions[0].offset == 2  # nothing stuck on the connection


async def test_list_offsets_special_timestamps_only_from_their_version(start_broker):
    # ReplicaManager.timestampMinSupportedVersion: -3 from v7, -4 from v8, -5 from v9; any other
    # negative timestamp is no special value at any version.
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(PRODUCE, 9, produce_request(batch(b"a", b"b")))

    async def ask(version, timestamp):
        resp = await client.request(LIST_OFFSETS, version,
                                    offsets_request(("t", 0, timestamp), version=version))
        p = resp.topics[0].partitions[0]
        return p.error_code, p.offset

    unsupported = (ErrorCode.UNSUPPORTED_VERSION, -1)
    assert await ask(6, -3) == unsupported
    assert await ask(7, -3) == (ErrorCode.NONE, 1)  # the first record with the largest timestamp
    assert await ask(7, -4) == unsupported
    assert await ask(8, -4) == (ErrorCode.NONE, 0)
    assert await ask(8, -5) == unsupported
    assert await ask(9, -5) == (ErrorCode.NONE, -1)  # no tiered storage
    assert await ask(10, -6) == unsupported
    assert await ask(10, -7) == unsupported
    assert await ask(1, -1) == (ErrorCode.NONE, 2)
    assert await ask(1, -2) == (ErrorCode.NONE, 0)


async def test_delete_records_applies_the_offset_a_partition_is_named_with_last(start_broker):
    # KafkaApis.handleDeleteRecordsRequest fills a map by partition: the last offset named wins,
    # and each partition is answered once.
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(PRODUCE, 9, produce_request(batch(b"a", b"b", b"c")))
    resp = await client.request(DELETE_RECORDS, 2, dr.DeleteRecordsRequest(timeout_ms=1000, topics=[
        dr.DeleteRecordsTopic(name="t", partitions=[
            dr.DeleteRecordsPartition(partition_index=0, offset=2),
            dr.DeleteRecordsPartition(partition_index=1, offset=0)]),
        dr.DeleteRecordsTopic(name="t", partitions=[
            dr.DeleteRecordsPartition(partition_index=0, offset=1)])]))
    assert [(t.name, [(p.partition_index, p.error_code, p.low_watermark) for p in t.partitions])
            for t in resp.topics] == [("t", [(0, ErrorCode.NONE, 1), (1, ErrorCode.NONE, 0)])]
    earliest = await client.request(LIST_OFFSETS, 7, offsets_request(("t", 0, -2)))
    assert earliest.topics[0].partitions[0].offset == 1


async def test_metadata_auto_creates_with_leader_not_available_once(start_broker):
    bound = await start_broker({"num.partitions": "3"})
    client = await WireClient.connect(bound.host, bound.port)
    ask = md.MetadataRequest(topics=[md.MetadataRequestTopic(name="fresh")],
                             allow_auto_topic_creation=True)
    first = await client.request(METADATA, 12, ask)
    assert first.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE
    second = await client.request(METADATA, 12, ask)
    assert second.topics[0].error_code == 0 and len(second.topics[0].partitions) == 3
    refused = await client.request(METADATA, 12, md.MetadataRequest(
        topics=[md.MetadataRequestTopic(name="other")], allow_auto_topic_creation=False))
    assert refused.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION



async def test_produce_auto_creates_unknown_topics_only_when_enabled(start_broker):
    """kafka-emu's spec: Produce auto-creates an unknown topic (num.partitions partitions) when
    auto.create.topics.enable is on -- a listed difference, Kafka creates only from Metadata.
    Off, or for a partition beyond the topic, the answer is UNKNOWN_TOPIC_OR_PARTITION."""
    bound = await start_broker({"num.partitions": "2"})
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(PRODUCE, 9, produce_request(batch(b"x"), topic="fresh", partition=1))
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    assert bound.broker.topics.lookup("fresh").partitions == 2
    resp = await client.request(PRODUCE, 9, produce_request(batch(b"x"), topic="fresh", partition=5))
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    off = await start_broker({"auto.create.topics.enable": "false"})
    client = await WireClient.connect(off.host, off.port)
    resp = await client.request(PRODUCE, 9, produce_request(batch(b"x"), topic="nowhere"))
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert off.broker.topics.lookup("nowhere") is None
