"""KIP-1251 (Kafka 4.3) over real sockets: an OffsetCommit with a lagging member epoch commits the
partitions the member was assigned at that epoch or before, and is STALE_MEMBER_EPOCH for one it
got later or no longer holds. The heartbeats use kafka-emu's codec; the OffsetCommit v9 (topics by
name) and v10 (by id) and the OffsetFetch v9 are encoded and decoded by kafka-python 3's classes,
an encoder independent of ours, in a hand-built flexible frame."""

from __future__ import annotations

import struct
import uuid

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import (OffsetCommitRequest, OffsetCommitResponse,
                                     OffsetFetchRequest, OffsetFetchResponse)

from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.testing.wire import WireClient

CGH = BY_NAME["ConsumerGroupHeartbeat"]


async def kp_call(client: WireClient, request, response_cls, version: int):
    body = bytes(ApiMessage.encode(request, version=version))
    client_id = b"kp"
    # request header v2: api key, version, correlation id, client id, no tagged fields
    header = struct.pack(">hhih", request.API_KEY, version, 91, len(client_id)) + client_id + b"\0"
    frame = header + body
    await client.send_raw(struct.pack(">i", len(frame)) + frame)
    answer = await client.receive_frame()
    assert answer is not None, "the broker closed the connection"
    assert struct.unpack(">i", answer[:4])[0] == 91 and answer[4] == 0
    return ApiMessage.decode.__func__(response_cls, answer[5:], version=version)


class Members:
    def __init__(self, wire: WireClient, topic_id):
        self.wire, self.topic_id = wire, topic_id
        self.ids: dict[str, str] = {}

    async def hb(self, name: str, epoch: int, owned=None):
        member_id = self.ids.setdefault(name, str(uuid.uuid4()))
        fields: dict = dict(group_id="g", member_id=member_id, member_epoch=epoch)
        if epoch == 0:
            fields.update(rebalance_timeout_ms=30_000, subscribed_topic_names=["t"],
                          topic_partitions=[])
        elif owned is not None:
            fields["topic_partitions"] = [cgh.ConsumerGroupHeartbeatTopicPartitions(
                topic_id=self.topic_id, partitions=sorted(owned))]
        r = await self.wire.request(CGH, 1, cgh.ConsumerGroupHeartbeatRequest(**fields))
        assert r.error_code == E.NONE, r
        got = None if r.assignment is None else {
            p for tp in r.assignment.topic_partitions for p in tp.partitions}
        return r.member_epoch, got


def commit(member_id: str, epoch: int, partitions, *, topic_id=None):
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    P = T.OffsetCommitRequestPartition
    topic = T(topic_id=topic_id) if topic_id is not None else T(name="t")
    topic.partitions = [P(partition_index=p, committed_offset=100 + p) for p in partitions]
    return OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=epoch,
                               member_id=member_id, topics=[topic])


def errors(resp) -> list[tuple[int, int]]:
    return [(p.partition_index, p.error_code) for t in resp.topics for p in t.partitions]


async def test_lagging_offset_commit_v9_and_v10(start_broker):
    bound = await start_broker(topics={"t": 6})
    topic_id = bound.broker.topics.lookup("t").topic_id
    wire = await WireClient.connect(bound.host, bound.port)
    m = Members(wire, topic_id)
    assert await m.hb("a", 0) == (1, set(range(6)))
    assert (await m.hb("b", 0))[0] == 2
    assert await m.hb("a", 1, owned=range(6)) == (1, {0, 1, 2})  # revoke 3-5 first
    assert (await m.hb("a", 1, owned={0, 1, 2}))[0] == 2  # a: epoch 2, t0-2 assigned at 1
    assert await m.hb("b", 2, owned=set()) == (2, {3, 4, 5})  # b: t3-5 assigned at 2
    a, b = m.ids["a"], m.ids["b"]

    # a still commits with epoch 1 (it has not seen its epoch 2 yet): its partitions pass
    resp = await kp_call(wire, commit(a, 1, [0, 1, 2]), OffsetCommitResponse, 9)
    assert errors(resp) == [(0, E.NONE), (1, E.NONE), (2, E.NONE)]
    # a partition it no longer holds refuses the whole commit
    resp = await kp_call(wire, commit(a, 1, [0, 3]), OffsetCommitResponse, 9)
    assert errors(resp) == [(0, E.STALE_MEMBER_EPOCH), (3, E.STALE_MEMBER_EPOCH)]
    # b got t3 at epoch 2: epoch 1 is too old for it; by topic id (v10) the same
    resp = await kp_call(wire, commit(b, 1, [3], topic_id=topic_id), OffsetCommitResponse, 10)
    assert errors(resp) == [(3, E.STALE_MEMBER_EPOCH)]
    resp = await kp_call(wire, commit(b, 2, [3], topic_id=topic_id), OffsetCommitResponse, 10)
    assert errors(resp) == [(3, E.NONE)]
    # a newer epoch than the member's stays fenced
    resp = await kp_call(wire, commit(a, 3, [0]), OffsetCommitResponse, 9)
    assert errors(resp) == [(0, E.STALE_MEMBER_EPOCH)]

    # what was accepted is what OffsetFetch v9 returns; a lagging epoch there is still fenced
    G = OffsetFetchRequest.OffsetFetchRequestGroup
    T = G.OffsetFetchRequestTopics

    def fetch(epoch):
        return OffsetFetchRequest(groups=[G(group_id="g", member_id=a, member_epoch=epoch, topics=[
            T(name="t", partition_indexes=[0, 1, 2, 3, 4])])])
    (group,) = (await kp_call(wire, fetch(2), OffsetFetchResponse, 9)).groups
    assert group.error_code == E.NONE
    assert [(p.partition_index, p.committed_offset) for t in group.topics
            for p in t.partitions] == [(0, 100), (1, 101), (2, 102), (3, 103), (4, -1)]
    (group,) = (await kp_call(wire, fetch(1), OffsetFetchResponse, 9)).groups
    assert group.error_code == E.STALE_MEMBER_EPOCH
    await wire.aclose()
