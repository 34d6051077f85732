"""Group requests too large for two reads of the socket: the broker reads such a frame straight
into a buffer of its own (protocol/framing.py's ``room``), and hands every API but Produce its
bytes (``_whole``). Decoded from that buffer itself, a request's BYTES fields were bytearrays:
a leader's SyncGroup then closed its connection on the coordinator's lookup of equal
assignments (``unhashable type: 'bytearray'``), again at every retry, and the group never
settled."""

from __future__ import annotations

import trio
from confluent_kafka import Consumer

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages.describe_groups import DescribeGroupsRequest
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_emu.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_emu.testing.wire import WireClient

from .helpers import unique, wait_until

TOPICS, PARTITIONS = 5, 8000  # (a CreateTopics takes at most 10,000 partitions, as Kafka's)


def test_a_consumer_assigned_forty_thousand_partitions(kafka_emu_factory):
    """confluent-kafka's leader assigns itself 40,000 partitions: a SyncGroup of about 160 KB."""
    topics = [unique(f"wide{i}") for i in range(TOPICS)]
    emu = kafka_emu_factory(topics={topic: PARTITIONS for topic in topics})
    consumer = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("g")})
    assigned: list[int] = []
    consumer.subscribe(topics, on_assign=lambda _, parts: assigned.append(len(parts)))
    try:
        wait_until(lambda: assigned, tick=lambda: consumer.poll(0.1), timeout=60,
                   message="the assignment")
    finally:
        consumer.close()
    assert assigned == [TOPICS * PARTITIONS]


def test_large_metadata_and_assignment_round_trip(kafka_emu_factory):
    """A member's protocol metadata and assignment of 300 KB each, over a socket: the join, the
    sync and a heartbeat succeed, and DescribeGroups gives both back byte for byte."""
    emu = kafka_emu_factory()
    host, port = emu.bootstrap_servers.rsplit(":", 1)
    metadata, assignment = b"m" * 300_000, bytes(range(256)) * 1200
    group = unique("big")

    async def main() -> tuple:
        client = await WireClient.connect(host, int(port))

        def join(member_id: str) -> JoinGroupRequest:
            return JoinGroupRequest(
                group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                member_id=member_id, group_instance_id=None, protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=metadata)])

        first = await client.request(BY_NAME["JoinGroup"], 5, join(""))  # MEMBER_ID_REQUIRED
        joined = await client.request(BY_NAME["JoinGroup"], 5, join(first.member_id))
        synced = await client.request(BY_NAME["SyncGroup"], 3, SyncGroupRequest(
            group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
            group_instance_id=None, assignments=[SyncGroupRequestAssignment(
                member_id=joined.member_id, assignment=assignment)]))
        beat = await client.request(BY_NAME["Heartbeat"], 3, HeartbeatRequest(
            group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
            group_instance_id=None))
        described = await client.request(BY_NAME["DescribeGroups"], 5, DescribeGroupsRequest(
            groups=[group], include_authorized_operations=False))
        await client.stream.aclose()
        return first, joined, synced, beat, described.groups[0]

    first, joined, synced, beat, described = trio.run(main)
    assert first.error_code == 79 and joined.error_code == 0
    assert [m.metadata for m in joined.members] == [metadata]
    assert synced.error_code == 0 and synced.assignment == assignment
    assert beat.error_code == 0
    assert described.group_state == "Stable"
    assert [(m.member_metadata, m.member_assignment) for m in described.members] == [
        (metadata, assignment)]
