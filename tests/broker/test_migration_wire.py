"""Online migration over real sockets, each classic answer decoded by kafka-python's protocol
classes (an independent decoder) and the embedded ConsumerProtocol bytes built and read with
kafka-python's structs: a classic group upgraded by a ConsumerGroupHeartbeat, a classic member
told to rejoin and served by the consumer group (JoinGroup with no leader and no member list,
SyncGroup with the server's assignment), ListGroups' type, then the consumer member's leave
converting the group back (DescribeGroups: a classic group rebalancing at the last group epoch).
"""

from __future__ import annotations

import uuid

from kafka.protocol.admin import DescribeGroupsResponse as KpDescribeGroups
from kafka.protocol.admin import ListGroupsResponse as KpListGroups
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import HeartbeatResponse as KpHeartbeat
from kafka.protocol.consumer import JoinGroupResponse as KpJoinGroup
from kafka.protocol.consumer import SyncGroupResponse as KpSyncGroup
from kafka.protocol.old.consumer_protocol import (ConsumerProtocolMemberAssignment_v0,
                                                  ConsumerProtocolMemberMetadata_v0)

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import describe_groups as dg
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import list_groups as lg
from kafka_emu.protocol.messages import sync_group as sg
from kafka_emu.testing.wire import WireClient

E = ErrorCode
API = {name: BY_NAME[name] for name in ("JoinGroup", "SyncGroup", "Heartbeat", "ListGroups",
                                        "DescribeGroups", "ConsumerGroupHeartbeat")}
METADATA = ConsumerProtocolMemberMetadata_v0(0, ["t"], b"").encode()


def kp(cls, version, frame):
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True)


async def call(wire, api, version, body, theirs):
    await wire.send(API[api], version, body)
    return kp(theirs, version, await wire.receive_frame())


def join_request(member_id=""):
    return jg.JoinGroupRequest(group_id="g", session_timeout_ms=30000,
                               rebalance_timeout_ms=30000, member_id=member_id,
                               protocol_type="consumer", group_instance_id=None,
                               protocols=[jg.JoinGroupRequestProtocol(name="range",
                                                                      metadata=METADATA)])


def assignment(partitions):
    return ConsumerProtocolMemberAssignment_v0(0, [("t", sorted(partitions))], b"").encode()


def read_assignment(data):
    return {tp.partition for tp in ConsumerProtocolMemberAssignment_v0.decode(data).partitions()}


async def classic_group(start_broker):
    """One classic member owning t-0..3 in a Stable group; its connection, id, generation."""
    bound = await start_broker({"group.initial.rebalance.delay.ms": 0}, topics={"t": 4})
    wire = await WireClient.connect(bound.host, bound.port)
    first = await call(wire, "JoinGroup", 5, join_request(), KpJoinGroup)
    assert first.error_code == E.MEMBER_ID_REQUIRED
    joined = await call(wire, "JoinGroup", 5, join_request(first.member_id), KpJoinGroup)
    assert joined.error_code == 0 and joined.leader == joined.member_id
    synced = await call(wire, "SyncGroup", 5, sg.SyncGroupRequest(
        group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
        protocol_type="consumer", protocol_name="range",
        assignments=[sg.SyncGroupRequestAssignment(member_id=joined.member_id,
                                                   assignment=assignment(range(4)))]),
        KpSyncGroup)
    assert synced.error_code == 0 and read_assignment(synced.assignment) == {0, 1, 2, 3}
    return bound, wire, joined.member_id, joined.generation_id


async def test_upgrade_serve_the_classic_member_and_downgrade(start_broker):
    bound, wire, classic, generation = await classic_group(start_broker)
    new = await WireClient.connect(bound.host, bound.port)
    member = str(uuid.uuid4())
    r = await new.request(API["ConsumerGroupHeartbeat"], 1, cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=member, member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["t"], topic_partitions=[]))
    assert r.error_code == 0 and r.member_epoch == generation + 1
    assert r.assignment.topic_partitions == []  # the classic member holds all four still

    listed = await call(wire, "ListGroups", 5, lg.ListGroupsRequest(), KpListGroups)
    assert [(g.group_id, g.protocol_type, g.group_type) for g in listed.groups] == [
        ("g", "consumer", "consumer")]

    beat = await call(wire, "Heartbeat", 4, hb.HeartbeatRequest(
        group_id="g", generation_id=generation, member_id=classic), KpHeartbeat)
    assert beat.error_code == E.REBALANCE_IN_PROGRESS
    rejoined = await call(wire, "JoinGroup", 5, join_request(classic), KpJoinGroup)
    assert (rejoined.error_code, rejoined.generation_id, rejoined.protocol_name,
            rejoined.leader, rejoined.members) == (0, generation + 1, "range", "", [])
    synced = await call(wire, "SyncGroup", 5, sg.SyncGroupRequest(
        group_id="g", generation_id=rejoined.generation_id, member_id=classic,
        protocol_type="consumer", protocol_name="range", assignments=[]),
        KpSyncGroup)
    kept = read_assignment(synced.assignment)
    assert synced.error_code == 0 and len(kept) == 2  # the uniform assignor's half

    r = await new.request(API["ConsumerGroupHeartbeat"], 1, cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=member, member_epoch=r.member_epoch, topic_partitions=[]))
    got = {p for tp in r.assignment.topic_partitions for p in tp.partitions}
    assert got == {0, 1, 2, 3} - kept

    # the consumer-protocol member leaves: the group is classic again and rebalancing
    r = await new.request(API["ConsumerGroupHeartbeat"], 1, cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=member, member_epoch=-1))
    assert (r.error_code, r.member_epoch) == (0, -1)
    described = await call(wire, "DescribeGroups", 5, dg.DescribeGroupsRequest(groups=["g"]),
                           KpDescribeGroups)
    (group,) = described.groups
    assert (group.error_code, group.group_state, group.protocol_type) == (
        0, "PreparingRebalance", "consumer")
    assert [m.member_id for m in group.members] == [classic]
    beat = await call(wire, "Heartbeat", 4, hb.HeartbeatRequest(
        group_id="g", generation_id=generation + 1, member_id=classic), KpHeartbeat)
    assert beat.error_code == E.REBALANCE_IN_PROGRESS  # generation: the group epoch it had
    await wire.aclose()
    await new.aclose()
