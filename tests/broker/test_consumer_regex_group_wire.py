"""Regex subscriptions resolved per group (#34 item 4) over real sockets: a pattern new to the
group is assigned on the member's second heartbeat (Kafka resolves it in the background; the
order librdkafka's 0045_subscribe_update resubscribe_with_regex checks), and two members that
subscribed by one pattern before the topic existed share it once CreateTopics makes it."""

from __future__ import annotations

import uuid

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import create_topics as ct
from kafka_emu.protocol.registry import BY_NAME
from kafka_emu.testing.wire import WireClient

CGH = BY_NAME["ConsumerGroupHeartbeat"]
CREATE_TOPICS = BY_NAME["CreateTopics"]
PATTERN = "metrics-.*"


class Member:
    def __init__(self, client: WireClient) -> None:
        self.client = client
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: dict[uuid.UUID, list[int]] = {}

    async def heartbeat(self) -> cgh.ConsumerGroupHeartbeatResponse:
        joining = self.epoch == 0
        r = await self.client.request(CGH, 1, cgh.ConsumerGroupHeartbeatRequest(
            group_id="g", member_id=self.member_id, member_epoch=self.epoch,
            rebalance_timeout_ms=30_000 if joining else -1,
            subscribed_topic_regex=PATTERN if joining else None,
            topic_partitions=[cgh.ConsumerGroupHeartbeatTopicPartitions(topic_id=t, partitions=ps)
                              for t, ps in self.owned.items()]))
        assert r.error_code == ErrorCode.NONE, r
        self.epoch = r.member_epoch
        if r.assignment is not None:
            self.owned = {tp.topic_id: sorted(tp.partitions)
                          for tp in r.assignment.topic_partitions}
        return r

    def partitions(self) -> set[tuple[uuid.UUID, int]]:
        return {(t, p) for t, ps in self.owned.items() for p in ps}


async def create_topic(client: WireClient, name: str, partitions: int) -> None:
    r = await client.request(CREATE_TOPICS, 7, ct.CreateTopicsRequest(topics=[ct.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1, assignments=[],
        configs=[])]))
    assert r.topics[0].error_code == ErrorCode.NONE


async def test_new_pattern_is_assigned_on_the_second_heartbeat(start_broker):
    bound = await start_broker(topics={"metrics-1": 2, "other": 1})
    member = Member(await WireClient.connect(bound.host, bound.port))
    first = await member.heartbeat()
    assert (first.member_epoch, first.assignment.topic_partitions) == (1, [])
    second = await member.heartbeat()
    assert second.member_epoch == 2 and len(member.partitions()) == 2


async def test_members_subscribed_before_the_topic_exists_share_it(start_broker):
    bound = await start_broker(topics={"other": 1})
    members = [Member(await WireClient.connect(bound.host, bound.port)) for _ in range(2)]
    for _ in range(2):
        for m in members:
            await m.heartbeat()
    assert all(not m.partitions() for m in members)
    await create_topic(members[0].client, "metrics-1", 4)
    for _ in range(6):  # heartbeats, not time: each round is one heartbeat of each member
        for m in members:
            await m.heartbeat()
    a, b = (m.partitions() for m in members)
    assert len(a) == len(b) == 2 and not a & b  # before: the first to see it took all four
