"""ConsumerGroupHeartbeat details as Kafka 4.x answers them (issue #34 item 5), over real sockets:
whitespace-only ids refused like empty ones (Java's String.trim), the join's subscription message
worded as 4.x words it, a heartbeat at the previous epoch reporting a partition of an unknown
topic id fenced (Kafka's isSubset), server-made member ids in Kafka's Uuid format, and the log
lines naming the member's client and the heartbeat it left with."""

from __future__ import annotations

import logging
import re
import uuid

from kafka_emu.admin.connection import BrokerConnection
from kafka_emu.broker.log_sink import attach_log_sink
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatTopicPartitions)
from kafka_emu.testing import make_config, run_in_thread
from kafka_emu.testing.wire import WireClient

CGH = BY_NAME["ConsumerGroupHeartbeat"]
INVALID = ErrorCode.INVALID_REQUEST


def join(**kw) -> cgh.ConsumerGroupHeartbeatRequest:
    fields = dict(group_id="g", member_id=str(uuid.uuid4()), member_epoch=0,
                  rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[])
    fields.update(kw)
    return cgh.ConsumerGroupHeartbeatRequest(**fields)


async def connect(start_broker, topics=None):
    bound = await start_broker(topics=topics or {"t": 2})
    return await WireClient.connect(bound.host, bound.port)


async def test_whitespace_only_ids_are_refused_as_empty_ones(start_broker):
    wire = await connect(start_broker)
    for kw, message in [({"group_id": " \t"}, "GroupId can't be empty."),
                        ({"instance_id": "  "}, "InstanceId can't be empty."),
                        ({"rack_id": "\n"}, "RackId can't be empty."),
                        ({"member_id": "   "}, "MemberId can't be empty.")]:
        r = await wire.request(CGH, 1, join(**kw))
        assert (r.error_code, r.error_message) == (INVALID, message), kw
    # the member id comes first in Kafka 4.x's order
    r = await wire.request(CGH, 1, join(member_id=" ", group_id=" "))
    assert r.error_message == "MemberId can't be empty."
    # ids with something besides whitespace are fine
    r = await wire.request(CGH, 1, join(instance_id=" i ", rack_id=" r"))
    assert r.error_code == 0


async def test_join_without_subscription_is_refused_in_kafka_4_words(start_broker):
    wire = await connect(start_broker)
    r = await wire.request(CGH, 1, join(subscribed_topic_names=None))
    assert (r.error_code, r.error_message) == (
        INVALID, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                 "(re-)joining.")
    # an empty list is a member of no topic, accepted as Kafka 4.x accepts it
    assert (await wire.request(CGH, 1, join(subscribed_topic_names=[]))).error_code == 0


async def test_v0_static_leave_without_member_id_is_not_refused_for_it(start_broker):
    wire = await connect(start_broker)
    # -2 at v0 with an empty member id: Kafka checks the member id only at v1+, -1 and epochs > 0
    r = await wire.request(CGH, 0, ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="", member_epoch=-2, instance_id="i"))
    assert (r.error_code, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g not found.")
    r = await wire.request(CGH, 0, ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="", member_epoch=-3))
    assert (r.error_code, r.error_message) == (INVALID, "MemberEpoch is invalid.")


async def test_previous_epoch_reporting_an_unknown_topic_id_is_fenced(start_broker):
    wire = await connect(start_broker, topics={"a": 2, "b": 2})
    ids = {t.name: t.topic_id for t in (await wire.request(
        BY_NAME["Metadata"], 12, md.MetadataRequest(topics=None))).topics}
    one = str(uuid.uuid4())
    r1 = await wire.request(CGH, 1, join(member_id=one, subscribed_topic_names=["a"]))
    assert r1.member_epoch == 1
    # a subscription change gives it epoch 2 (it keeps its partitions of "a")
    r2 = await wire.request(CGH, 1, ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=one, member_epoch=1, subscribed_topic_names=["a", "b"],
        topic_partitions=[ConsumerGroupHeartbeatTopicPartitions(topic_id=ids["a"],
                                                                partitions=[0, 1])]))
    assert r2.member_epoch == 2

    def stale(extra):
        return ConsumerGroupHeartbeatRequest(
            group_id="g", member_id=one, member_epoch=1, topic_partitions=[
                ConsumerGroupHeartbeatTopicPartitions(topic_id=ids["a"], partitions=[0]), *extra])

    # the previous epoch with a subset of the assignment: accepted (a lost response)
    assert (await wire.request(CGH, 1, stale([]))).error_code == 0
    # ... but not with a partition of a topic id nobody knows: not a subset, fenced
    r = await wire.request(CGH, 1, stale([ConsumerGroupHeartbeatTopicPartitions(
        topic_id=uuid.uuid4(), partitions=[0])]))
    assert r.error_code == ErrorCode.FENCED_MEMBER_EPOCH


async def test_server_made_member_id_is_a_kafka_uuid(start_broker):
    wire = await connect(start_broker)
    ids = set()
    for _ in range(20):
        r = await wire.request(CGH, 0, join(member_id=""))
        assert r.error_code == 0
        ids.add(r.member_id)
    # Uuid.randomUuid().toString(): 16 bytes in unpadded base64url, never starting with '-'
    assert len(ids) == 20
    assert all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", m) for m in ids), ids


def test_log_lines_name_the_client_and_the_heartbeat_leave(caplog):
    caplog.set_level(logging.INFO, logger="kafka_emu")
    with run_in_thread(make_config(topics={"t": 1})) as emu:
        assert emu._call(lambda: attach_log_sink(emu.broker)) is not None
        with BrokerConnection(emu.host, emu.port, client_id="watcher") as conn:
            member = str(uuid.uuid4())
            joined = conn.request("ConsumerGroupHeartbeat", join(member_id=member))[1]
            assert joined.error_code == 0
            left = conn.request("ConsumerGroupHeartbeat", ConsumerGroupHeartbeatRequest(
                group_id="g", member_id=member, member_epoch=-1))[1]
            assert left.error_code == 0
    groups = [r.getMessage() for r in caplog.records if r.name == "kafka_emu.groups"]
    assert f"group g: member {member} joined (client watcher)" in groups, groups
    assert (f"group g: member {member} left (ConsumerGroupHeartbeat with member epoch -1)"
            in groups), groups
