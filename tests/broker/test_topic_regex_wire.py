"""SubscribedTopicRegex over real sockets: a regex that backtracking engines take exponential
time on no longer stops the broker (issue #33: ``(a*)*b`` against a topic ``'a'*24 + '-'`` held
every client for 10 s), RE2/J's syntax as Kafka answers it, and a join that names owned
partitions refused as Kafka refuses it.
"""

from __future__ import annotations

import uuid

import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.registry import BY_NAME
from kafka_emu.testing.wire import WireClient

CGH = BY_NAME["ConsumerGroupHeartbeat"]
METADATA = BY_NAME["Metadata"]
# Python's re took 1-10 s at 24 characters (machine to machine) and x4 per two more: 30 is minutes
# on the old code, so the hang guard below fails it; RE2 answers at once.
BACKTRACKING_TOPIC = "a" * 30 + "-"


def join(regex: str | None = None, *, names=None, owned=()) -> cgh.ConsumerGroupHeartbeatRequest:
    return cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=str(uuid.uuid4()), member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_names=names, subscribed_topic_regex=regex,
        topic_partitions=list(owned))


async def second_heartbeat(client: WireClient, request,
                           first) -> cgh.ConsumerGroupHeartbeatResponse:
    """The joining member's next heartbeat: a pattern new to the group is resolved after the
    answer to the join (as Kafka resolves it in the background), so it is assigned here."""
    assert first.error_code == ErrorCode.NONE and not first.assignment.topic_partitions
    return await client.request(CGH, 1, cgh.ConsumerGroupHeartbeatRequest(
        group_id=request.group_id, member_id=request.member_id, member_epoch=first.member_epoch,
        topic_partitions=[]))


async def topic_ids(client: WireClient) -> dict[str, uuid.UUID]:
    meta = await client.request(METADATA, 12, md.MetadataRequest(topics=None))
    return {t.name: t.topic_id for t in meta.topics}


async def test_backtracking_regex_heartbeat_does_not_stop_other_clients(start_broker):
    bound = await start_broker(topics={BACKTRACKING_TOPIC: 1, "aab": 1})
    member = await WireClient.connect(bound.host, bound.port)
    other = await WireClient.connect(bound.host, bound.port)
    answers = {}

    request = join("(a*)*b")

    async def heartbeat():
        answers["member"] = await member.request(CGH, 1, request)

    async def metadata():
        answers["other"] = await other.request(METADATA, 12, md.MetadataRequest(topics=None))

    with trio.fail_after(10):  # a hang guard only: the old broker sat minutes in re.fullmatch
        async with trio.open_nursery() as nursery:
            nursery.start_soon(heartbeat)
            nursery.start_soon(metadata)
        # The broker runs on this thread: a blocked broker blocks the guard's timer too, so look
        # at the guard once more after both answers came.
        await trio.lowlevel.checkpoint()
    with trio.fail_after(10):
        r = await second_heartbeat(member, request, answers["member"])
    assert r.error_code == ErrorCode.NONE
    ids = await topic_ids(other)
    assigned = {tp.topic_id for tp in r.assignment.topic_partitions}
    assert assigned == {ids["aab"]}  # matched whole names: "aab" only, never the long one
    assert {t.name for t in answers["other"].topics} == {BACKTRACKING_TOPIC, "aab"}


async def test_repeat_count_over_1000_is_refused_as_re2j_refuses_it(start_broker):
    bound = await start_broker(topics={"t": 1})
    client = await WireClient.connect(bound.host, bound.port)
    r = await client.request(CGH, 1, join("a{1001}"))
    assert r.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert r.error_message == ("SubscribedTopicRegex `a{1001}` is not a valid regular expression: "
                               "invalid repeat count.")
    assert (await client.request(CGH, 1, join("a{1000}"))).error_code == ErrorCode.NONE


async def test_quoted_literal_is_accepted_and_literal(start_broker):
    bound = await start_broker(topics={"t.1": 1, "tx1": 1})
    client = await WireClient.connect(bound.host, bound.port)
    request = join(r"t\Q.\E1")
    r = await second_heartbeat(client, request, await client.request(CGH, 1, request))
    assert r.error_code == ErrorCode.NONE
    ids = await topic_ids(client)
    assert {tp.topic_id for tp in r.assignment.topic_partitions} == {ids["t.1"]}


async def test_join_naming_owned_partitions_is_invalid_request(start_broker):
    bound = await start_broker(topics={"t": 2})
    client = await WireClient.connect(bound.host, bound.port)
    ids = await topic_ids(client)
    owned_lists = [
        [cgh.ConsumerGroupHeartbeatTopicPartitions(topic_id=ids["t"], partitions=[0])],
        # Kafka checks the list itself: an entry with no partitions, or of a topic id it does
        # not know, is as much a claim as any.
        [cgh.ConsumerGroupHeartbeatTopicPartitions(topic_id=ids["t"], partitions=[])],
        [cgh.ConsumerGroupHeartbeatTopicPartitions(topic_id=uuid.uuid4(), partitions=[0])],
    ]
    for owned in owned_lists:
        r = await client.request(CGH, 1, join(names=["t"], owned=owned))
        assert (r.error_code, r.error_message) == (
            ErrorCode.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."), owned
    assert (await client.request(CGH, 1, join(names=["t"]))).error_code == ErrorCode.NONE
