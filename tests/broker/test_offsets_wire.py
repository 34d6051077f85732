"""OffsetCommit / OffsetFetch / OffsetDelete through the broker's front end: unknown topics and
partitions are refused per partition before the coordinator sees them (reference 3.16, 4.1)."""

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import offset_delete as od
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.testing.wire import WireClient

COMMIT, FETCH, DELETE = BY_NAME["OffsetCommit"], BY_NAME["OffsetFetch"], BY_NAME["OffsetDelete"]


def commit_request(group, entries):
    topics = {}
    for topic, partition, offset in entries:
        topics.setdefault(topic, []).append(oc.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_metadata="m"))
    return oc.OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                  topics=[oc.OffsetCommitRequestTopic(name=n, partitions=ps)
                                          for n, ps in topics.items()])


def errors_of(topics):
    return {(t.name, p.partition_index): p.error_code for t in topics for p in t.partitions}


async def test_simple_commit_refuses_unknown_partitions_and_keeps_the_rest(start_broker):
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(COMMIT, 8, commit_request(
        "g", [("t", 0, 5), ("t", 7, 1), ("nope", 0, 1), ("t", 1, 9)]))
    assert errors_of(resp.topics) == {
        ("t", 0): ErrorCode.NONE, ("t", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("t", 1): ErrorCode.NONE}
    assert [t.name for t in resp.topics] == ["t", "nope"]  # request order, grouped by topic
    fetched = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id="g", topics=None))
    offsets = {(t.name, p.partition_index): p.committed_offset
               for t in fetched.topics for p in t.partitions}
    assert offsets == {("t", 0): 5, ("t", 1): 9}


async def test_commit_of_only_unknown_partitions_never_creates_the_group(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    resp = await client.request(COMMIT, 8, commit_request("g", [("nope", 0, 1)]))
    assert errors_of(resp.topics) == {("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert bound.broker.coordinator.group_ids() == []


def delete_request(group, entries):
    topics = {}
    for topic, partition in entries:
        topics.setdefault(topic, []).append(od.OffsetDeleteRequestPartition(
            partition_index=partition))
    return od.OffsetDeleteRequest(group_id=group, topics=[
        od.OffsetDeleteRequestTopic(name=n, partitions=ps) for n, ps in topics.items()])


async def test_offset_delete_front_end_and_group_errors(start_broker):
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    missing = await client.request(DELETE, 0, delete_request("absent", [("t", 0)]))
    assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND and missing.topics == []
    await client.request(COMMIT, 8, commit_request("g", [("t", 0, 5), ("t", 1, 6)]))
    resp = await client.request(DELETE, 0, delete_request("g", [("t", 0), ("nope", 3)]))
    assert resp.error_code == ErrorCode.NONE
    assert errors_of(resp.topics) == {("t", 0): ErrorCode.NONE,
                                      ("nope", 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    fetched = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id="g", topics=None))
    assert [(t.name, p.partition_index) for t in fetched.topics for p in t.partitions] == [
        ("t", 1)]


async def test_deleting_a_topic_drops_committed_offsets_so_a_recreated_topic_starts_clean(start_broker):
    """Kafka's coordinator forgets offsets of deleted partitions: after delete + re-create the
    group's old position must not come back."""
    from kafka_emu.protocol.messages import create_topics as ct
    from kafka_emu.protocol.messages import delete_topics as dt
    bound = await start_broker(topics={"t": 2, "keep": 1})
    client = await WireClient.connect(bound.host, bound.port)
    await client.request(COMMIT, 8, commit_request("g", [("t", 0, 5), ("t", 1, 6), ("keep", 0, 7)]))
    deleted = await client.request(BY_NAME["DeleteTopics"], 4, dt.DeleteTopicsRequest(
        topic_names=["t"], timeout_ms=1000))
    assert [r.error_code for r in deleted.responses] == [ErrorCode.NONE]
    created = await client.request(BY_NAME["CreateTopics"], 5, ct.CreateTopicsRequest(
        topics=[ct.CreatableTopic(name="t", num_partitions=2, replication_factor=1)],
        timeout_ms=1000))
    assert [t.error_code for t in created.topics] == [ErrorCode.NONE]
    fetched = await client.request(FETCH, 7, of.OffsetFetchRequest(group_id="g", topics=[
        of.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1]),
        of.OffsetFetchRequestTopic(name="keep", partition_indexes=[0])]))
    offsets = {(t.name, p.partition_index): p.committed_offset
               for t in fetched.topics for p in t.partitions}
    assert offsets == {("t", 0): -1, ("t", 1): -1, ("keep", 0): 7}


def test_commit_render_without_rejections_is_the_general_render():
    """The handler's shortcut for a commit whose partitions all reached the coordinator answers
    exactly as the general render: topics merged by name in first-seen order, partitions in
    request order."""
    from kafka_emu.broker.handlers.offset_commit import render, render_all_known
    from kafka_emu.coordinator.results import OffsetCommitResult, PartitionError
    order = [("b", 1), ("a", 0), ("b", 0), ("c", 2), ("a", 3)]
    codes = [0, 12, 0, 25, 0]
    result = OffsetCommitResult(partitions=tuple(
        PartitionError(topic=t, partition=p, error=ErrorCode(code))
        for (t, p), code in zip(order, codes)))
    assert render_all_known(order, result) == render(order, {}, result)
    one = OffsetCommitResult(partitions=result.partitions[1:2])
    assert render_all_known(order[1:2], one) == render(order[1:2], {}, one)


def test_shared_one_partition_answer_is_the_general_answer_in_every_version():
    """The usual commit of one partition is answered with a shared response whose topic array
    was encoded once; it reads and encodes exactly as the general render's, for every error and
    version, and a second commit gets the same bytes."""
    from kafka_emu.broker.handlers.offset_commit import render, render_one
    from kafka_emu.coordinator.results import OffsetCommitResult, PartitionError
    from kafka_emu.protocol.headers import encode_response
    for version in range(2, 10):
        for code in (ErrorCode.NONE, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID):
            result = OffsetCommitResult(partitions=(PartitionError(topic="t", partition=3,
                                                                   error=code),))
            general = render([("t", 3)], {}, result)
            shared = render_one(version, result)
            assert shared == general
            assert (encode_response(COMMIT, version, 7, shared)
                    == encode_response(COMMIT, version, 7, general))
            assert render_one(version, result) is shared

