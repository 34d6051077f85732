"""A cluster in one process over the wire: every broker listens, partition requests reach only
the leader (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), group requests
only the coordinator (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), and ``__consumer_offsets``
is Kafka's internal topic. Routing answers are decoded with kafka-python's own message classes
too, an implementation independent of ours."""

from functools import partial

import pytest
import trio

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import FetchResponse as KpFetchResponse
from kafka.protocol.consumer import HeartbeatResponse as KpHeartbeatResponse
from kafka.protocol.metadata import MetadataResponse as KpMetadataResponse
from kafka.protocol.producer import ProduceResponse as KpProduceResponse
from kafka_emu.broker.cluster import offsets_partition_for
from kafka_emu.broker.server import serve
from kafka_emu.control.groups import group_view
from kafka_emu.control.operations import ControlError
from kafka_emu.errors import ErrorCode
from kafka_emu.log.records import Record, build_batch
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import describe_groups as dg
from kafka_emu.protocol.messages import describe_topic_partitions as dtp
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import find_coordinator as fc
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import list_groups as lg
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.protocol.messages import sync_group as sg
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

API = {name: BY_NAME[name] for name in ("Metadata", "Produce", "Fetch", "FindCoordinator",
                                        "JoinGroup", "SyncGroup", "Heartbeat", "DescribeGroups",
                                        "ListGroups")}


@pytest.fixture
def start_cluster(nursery):
    async def start(brokers=3, settings=None, topics=None):
        config = make_config(settings, topics=topics, brokers=brokers)
        return await nursery.start(partial(serve, config))
    return start


async def connect(bound, node_id):
    return await WireClient.connect(bound.host, bound.broker.cluster.nodes[node_id].port)


async def raw(client, api, version, body):
    """The response frame, for an independent decoder."""
    await client.send(API[api], version, body)
    return await client.receive_frame()


def kp(cls, version, frame):
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True)


def produce_request(topic, partition):
    blob = build_batch([Record(value=b"v", key=b"k", timestamp_ms=1000)])
    return pr.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[pr.TopicProduceData(
        name=topic, partition_data=[pr.PartitionProduceData(index=partition, records=blob)])])


def fetch_request(topic, partition, epoch=-1):
    return f.FetchRequest(max_wait_ms=0, min_bytes=0, topics=[f.FetchTopic(
        topic=topic, partitions=[f.FetchPartition(partition=partition, fetch_offset=0,
                                                  current_leader_epoch=epoch,
                                                  partition_max_bytes=1 << 20)])])


def join_request(group, member_id=""):
    return jg.JoinGroupRequest(group_id=group, session_timeout_ms=30000,
                               rebalance_timeout_ms=30000, member_id=member_id,
                               protocol_type="consumer",
                               protocols=[jg.JoinGroupRequestProtocol(name="range",
                                                                      metadata=b"m")])


async def test_every_broker_lists_the_cluster_and_leaders_spread(start_cluster):
    bound = await start_cluster(topics={"t": 6})
    ports = [n.port for n in bound.broker.cluster.nodes.values()]
    assert len(set(ports)) == 3
    assert bound.bootstrap == ",".join(f"127.0.0.1:{p}" for p in ports)
    for node_id in (1, 2, 3):
        client = await connect(bound, node_id)
        frame = await raw(client, "Metadata", 12, md.MetadataRequest(topics=None))
        theirs = kp(KpMetadataResponse, 12, frame)
        assert sorted((b.node_id, b.port) for b in theirs.brokers) == [
            (1, ports[0]), (2, ports[1]), (3, ports[2])]
        (topic,) = [t for t in theirs.topics if t.name == "t"]
        leaders = [p.leader_id for p in sorted(topic.partitions, key=lambda p: p.partition_index)]
        assert sorted(leaders) == [1, 1, 2, 2, 3, 3]  # default replication factor 1
        await client.aclose()


async def test_a_partition_request_to_a_broker_not_leading_it_is_not_leader(start_cluster):
    bound = await start_cluster(topics={"t": 1})
    placement = bound.broker.cluster.placement(
        bound.broker.topics.lookup("t").topic_id, "t", 0)
    other = next(n for n in (1, 2, 3) if n != placement.leader)
    wrong = await connect(bound, other)
    right = await connect(bound, placement.leader)
    theirs = kp(KpProduceResponse, 9, await raw(wrong, "Produce", 9, produce_request("t", 0)))
    assert theirs.responses[0].partition_responses[0].error_code == \
        ErrorCode.NOT_LEADER_OR_FOLLOWER
    ours = await right.request(API["Produce"], 9, produce_request("t", 0))
    assert ours.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    theirs = kp(KpFetchResponse, 12, await raw(wrong, "Fetch", 12, fetch_request("t", 0)))
    assert theirs.responses[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    fetched = await right.request(API["Fetch"], 12, fetch_request("t", 0))
    assert fetched.responses[0].partitions[0].error_code == ErrorCode.NONE
    assert fetched.responses[0].partitions[0].high_watermark == 1


async def test_a_leader_move_bumps_the_epoch_and_fences_the_old_one(start_cluster):
    bound = await start_cluster(topics={"t": 1})
    moves = bound.broker.cluster_moves
    old = moves.move_leader("t", 0, 1)["leader_epoch"]
    moved = moves.move_leader("t", 0, 2)
    assert moved["leader"] == 2 and moved["leader_epoch"] == old + 1
    old_leader, new_leader = await connect(bound, 1), await connect(bound, 2)
    resp = await old_leader.request(API["Fetch"], 12, fetch_request("t", 0, epoch=old + 1))
    assert resp.responses[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    theirs = kp(KpFetchResponse, 12, await raw(new_leader, "Fetch", 12,
                                               fetch_request("t", 0, epoch=old)))
    assert theirs.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
    resp = await new_leader.request(API["Fetch"], 12, fetch_request("t", 0, epoch=old + 2))
    assert resp.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    resp = await new_leader.request(API["Fetch"], 12, fetch_request("t", 0, epoch=old + 1))
    assert resp.responses[0].partitions[0].error_code == ErrorCode.NONE
    meta = await new_leader.request(API["Metadata"], 12, md.MetadataRequest(topics=None))
    (t,) = [t for t in meta.topics if t.name == "t"]
    assert (t.partitions[0].leader_id, t.partitions[0].leader_epoch) == (2, old + 1)


def test_the_group_partition_is_java_hash_code_modulo_the_partition_count():
    # "".hashCode() == 0; "g".hashCode() == 103; "polygenelubricants".hashCode() is
    # Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0
    assert offsets_partition_for("", 50) == 0
    assert offsets_partition_for("g", 50) == 103 % 50
    assert offsets_partition_for("polygenelubricants", 50) == 0
    assert offsets_partition_for("Aa", 50) == offsets_partition_for("BB", 50)  # same hash


async def test_group_requests_reach_only_the_coordinator(start_cluster):
    bound = await start_cluster()
    cluster = bound.broker.cluster
    anyone = await connect(bound, 1)
    found = await anyone.request(API["FindCoordinator"], 3, fc.FindCoordinatorRequest(key="g"))
    coordinator = cluster.coordinator_of("g")
    assert (found.error_code, found.node_id) == (ErrorCode.NONE, coordinator)
    assert found.port == cluster.nodes[coordinator].port
    batched = await anyone.request(API["FindCoordinator"], 4, fc.FindCoordinatorRequest(
        coordinator_keys=["g", "h"]))
    assert [c.node_id for c in batched.coordinators] == [coordinator, cluster.coordinator_of("h")]
    other = next(n for n in (1, 2, 3) if n != coordinator)
    wrong = await connect(bound, other)
    theirs = kp(KpHeartbeatResponse, 4, await raw(wrong, "Heartbeat", 4, hb.HeartbeatRequest(
        group_id="g", generation_id=1, member_id="m")))
    assert theirs.error_code == ErrorCode.NOT_COORDINATOR
    joined = await wrong.request(API["JoinGroup"], 9, join_request("g"))
    assert joined.error_code == ErrorCode.NOT_COORDINATOR
    right = await connect(bound, coordinator)
    joined = await right.request(API["JoinGroup"], 3, join_request("g"))
    assert joined.error_code == ErrorCode.NONE and joined.generation_id == 1
    # several groups at once: an error per group this broker does not coordinate
    described = await wrong.request(API["DescribeGroups"], 5, dg.DescribeGroupsRequest(
        groups=["g", "g"]))
    assert [g.error_code for g in described.groups] == [ErrorCode.NOT_COORDINATOR] * 2
    described = await right.request(API["DescribeGroups"], 5, dg.DescribeGroupsRequest(
        groups=["g"]))
    assert described.groups[0].group_state == "CompletingRebalance"
    for node_id in (1, 2, 3):
        client = await connect(bound, node_id)
        listed = await client.request(API["ListGroups"], 4, lg.ListGroupsRequest())
        assert [g.group_id for g in listed.groups] == (["g"] if node_id == coordinator else [])


async def test_a_coordinator_move_unloads_then_loads_the_group(start_cluster):
    bound = await start_cluster()
    cluster, moves = bound.broker.cluster, bound.broker.cluster_moves
    old = cluster.coordinator_of("g")
    new = old % 3 + 1
    client = await connect(bound, old)
    joined = await client.request(API["JoinGroup"], 3, join_request("g"))
    synced = await client.request(API["SyncGroup"], 3, sg.SyncGroupRequest(
        group_id="g", generation_id=1, member_id=joined.member_id,
        assignments=[sg.SyncGroupRequestAssignment(member_id=joined.member_id,
                                                   assignment=b"a")]))
    assert synced.error_code == ErrorCode.NONE
    # a second member parks its JoinGroup on the old coordinator (the group rebalances)
    second = await connect(bound, old)
    await second.send(API["JoinGroup"], 3, join_request("g"))
    await trio.sleep(0.1)
    moves.move_coordinator("g", new, load_ms=300)
    parked = await second.receive(API["JoinGroup"], 3)
    assert parked.error_code == ErrorCode.NOT_COORDINATOR  # unloaded, as Kafka answers it
    beat = hb.HeartbeatRequest(group_id="g", generation_id=1, member_id=joined.member_id)
    assert (await client.request(API["Heartbeat"], 3, beat)).error_code == \
        ErrorCode.NOT_COORDINATOR
    target = await connect(bound, new)
    loading = await target.request(API["JoinGroup"], 3, join_request("g", joined.member_id))
    assert loading.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    # Heartbeat answers a plain success while the group loads (GroupCoordinatorService)
    assert (await target.request(API["Heartbeat"], 3, beat)).error_code == ErrorCode.NONE
    # the control plane's view says it loads (409), not that the group is gone (404)
    with pytest.raises(ControlError) as loading_view:
        group_view(bound.broker, "g")
    assert loading_view.value.status == 409 and "is loading" in str(loading_view.value)
    await trio.sleep(0.4)
    assert group_view(bound.broker, "g")["generation"] == 1
    # reloaded as last stored: Stable, generation 1, the first member with its assignment
    assert (await target.request(API["Heartbeat"], 3, beat)).error_code == ErrorCode.NONE
    group = bound.broker.coordinator.group("g")
    assert (group.state.value, group.generation, list(group.members)) == (
        "Stable", 1, [joined.member_id])
    assert group.members[joined.member_id].assignment == b"a"


async def test_a_stopped_broker_is_gone_until_it_starts_again(start_cluster):
    bound = await start_cluster(topics={"t": 3})
    moves, cluster = bound.broker.cluster_moves, bound.broker.cluster
    topic_id = bound.broker.topics.lookup("t").topic_id
    led_by_2 = [p for p in range(3) if cluster.placement(topic_id, "t", p).leader == 2]
    connected = await connect(bound, 2)
    port = cluster.nodes[2].port
    moves.stop(2)
    await trio.sleep(0.05)
    assert await connected.receive_frame() is None  # its connections dropped
    with pytest.raises(OSError):
        await trio.open_tcp_stream(bound.host, port)
    client = await connect(bound, 1)
    meta = await client.request(API["Metadata"], 12, md.MetadataRequest(topics=None))
    assert sorted(b.node_id for b in meta.brokers) == [1, 3]
    (t,) = [t for t in meta.topics if t.name == "t"]
    for p in t.partitions:  # replication factor 1: a partition led by 2 has no leader now
        if p.partition_index in led_by_2:
            assert (p.error_code, p.leader_id, p.offline_replicas) == (
                ErrorCode.LEADER_NOT_AVAILABLE, -1, [2])
    described = await client.request(BY_NAME["DescribeTopicPartitions"], 0,
                                     dtp.DescribeTopicPartitionsRequest(
                                         topics=[dtp.TopicRequest(name="t")],
                                         response_partition_limit=10))
    for p in described.topics[0].partitions:  # no error there, only the missing leader
        if p.partition_index in led_by_2:
            assert (p.error_code, p.leader_id, p.offline_replicas) == (ErrorCode.NONE, -1, [2])
    moves.start(2)
    again = await connect(bound, 2)
    assert cluster.nodes[2].port == port
    meta = await again.request(API["Metadata"], 12, md.MetadataRequest(topics=None))
    assert sorted(b.node_id for b in meta.brokers) == [1, 2, 3]
    (t,) = [t for t in meta.topics if t.name == "t"]
    assert all(p.error_code == ErrorCode.NONE for p in t.partitions)


async def test_stopping_a_coordinator_moves_its_groups_to_a_replica(start_cluster):
    bound = await start_cluster(settings={"emu.coordinator.load.time.ms": 0})
    cluster, moves = bound.broker.cluster, bound.broker.cluster_moves
    old = cluster.coordinator_of("g")
    client = await connect(bound, old)
    joined = await client.request(API["JoinGroup"], 3, join_request("g"))
    await client.request(API["SyncGroup"], 3, sg.SyncGroupRequest(
        group_id="g", generation_id=1, member_id=joined.member_id, assignments=[]))
    moves.stop(old)
    new = cluster.coordinator_of("g")
    assert new not in (old, -1)
    target = await connect(bound, new)
    beat = hb.HeartbeatRequest(group_id="g", generation_id=1, member_id=joined.member_id)
    assert (await target.request(API["Heartbeat"], 3, beat)).error_code == ErrorCode.NONE


async def test_consumer_offsets_is_the_internal_topic_kafka_shows(start_cluster):
    bound = await start_cluster(brokers=1)
    client = await WireClient.connect(bound.host, bound.port)
    meta = await client.request(API["Metadata"], 12, md.MetadataRequest(topics=None))
    assert meta.topics == []  # not there before a group needs it
    await client.request(API["FindCoordinator"], 3, fc.FindCoordinatorRequest(key="g"))
    meta = await client.request(API["Metadata"], 12, md.MetadataRequest(topics=None))
    (t,) = meta.topics
    assert (t.name, t.is_internal, len(t.partitions)) == ("__consumer_offsets", True, 50)
    produced = await client.request(API["Produce"], 9, produce_request("__consumer_offsets", 0))
    part = produced.responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


async def test_asking_for_consumer_offsets_by_name_creates_the_internal_topic(start_cluster):
    bound = await start_cluster(brokers=1, settings={"offsets.topic.num.partitions": 5})
    client = await WireClient.connect(bound.host, bound.port)
    produced = await client.request(API["Produce"], 9, produce_request("__consumer_offsets", 0))
    assert produced.responses[0].partition_responses[0].error_code == \
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # never auto-created as an ordinary topic
    wanted = md.MetadataRequest(topics=[md.MetadataRequestTopic(name="__consumer_offsets")],
                                allow_auto_topic_creation=True)
    first = await client.request(API["Metadata"], 12, wanted)
    assert first.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE
    again = await client.request(API["Metadata"], 12, wanted)
    assert (again.topics[0].is_internal, len(again.topics[0].partitions)) == (True, 5)


async def test_offset_for_leader_epoch_says_where_each_epoch_ended(start_cluster):
    from kafka.protocol.consumer import OffsetForLeaderEpochResponse as KpResponse
    from kafka_emu.protocol.messages import offset_for_leader_epoch as ofl
    bound = await start_cluster(topics={"t": 1})
    moves = bound.broker.cluster_moves
    first = moves.move_leader("t", 0, 1)["leader_epoch"]
    leader = await connect(bound, 1)
    for _ in range(2):
        assert (await leader.request(API["Produce"], 9, produce_request("t", 0))).responses[
            0].partition_responses[0].error_code == ErrorCode.NONE
    second = moves.move_leader("t", 0, 3)["leader_epoch"]
    new_leader = await connect(bound, 3)
    assert (await new_leader.request(API["Produce"], 9, produce_request("t", 0))).responses[
        0].partition_responses[0].error_code == ErrorCode.NONE

    def ask(epoch, current=-1):
        return ofl.OffsetForLeaderEpochRequest(topics=[ofl.OffsetForLeaderTopic(
            topic="t", partitions=[ofl.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=current, leader_epoch=epoch)])])

    api = BY_NAME["OffsetForLeaderEpoch"]
    await new_leader.send(api, 4, ask(first, second))
    theirs = kp(KpResponse, 4, await new_leader.receive_frame())
    part = theirs.topics[0].partitions[0]
    assert (part.error_code, part.leader_epoch, part.end_offset) == (ErrorCode.NONE, first, 2)
    latest = (await new_leader.request(api, 4, ask(second, second))).topics[0].partitions[0]
    assert (latest.leader_epoch, latest.end_offset) == (second, 3)
    unknown = (await new_leader.request(api, 4, ask(second + 1))).topics[0].partitions[0]
    assert (unknown.leader_epoch, unknown.end_offset) == (-1, -1)
    fenced = (await new_leader.request(api, 4, ask(first, first))).topics[0].partitions[0]
    assert fenced.error_code == ErrorCode.FENCED_LEADER_EPOCH
    old = (await leader.request(api, 4, ask(first, second))).topics[0].partitions[0]
    assert old.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


async def test_elect_leaders_moves_leadership_back_to_the_preferred_replica(start_cluster):
    from kafka_emu.protocol.messages import elect_leaders as el
    bound = await start_cluster(topics={"t": 1})
    moves = bound.broker.cluster_moves
    bound.broker.cluster.replication[bound.broker.topics.lookup("t").topic_id] = 3
    placed = moves.move_leader("t", 0, 1)  # placed now, with three replicas
    preferred = placed["replicas"][0]
    other = next(r for r in placed["replicas"] if r != preferred)
    epoch = moves.move_leader("t", 0, other)["leader_epoch"]
    client = await connect(bound, 1)
    api = BY_NAME["ElectLeaders"]
    request = el.ElectLeadersRequest(election_type=0, topic_partitions=[
        el.TopicPartitions(topic="t", partitions=[0])])
    answer = await client.request(api, 2, request)
    assert answer.replica_election_results[0].partition_result[0].error_code == ErrorCode.NONE
    assert (moves.cluster.placement(bound.broker.topics.lookup("t").topic_id, "t", 0).leader,
            moves._partition("t", 0)[1].leader_epoch) == (preferred, epoch + 1)
    again = await client.request(api, 2, request)
    assert again.replica_election_results[0].partition_result[0].error_code == \
        ErrorCode.ELECTION_NOT_NEEDED


async def test_elect_leaders_for_every_partition_reports_all_but_those_needing_none(
        start_cluster):
    from kafka_emu.protocol.messages import elect_leaders as el
    bound = await start_cluster(topics={"t": 3})
    moves = bound.broker.cluster_moves
    bound.broker.cluster.replication[bound.broker.topics.lookup("t").topic_id] = 3
    replicas = [moves.move_leader("t", p, 1)["replicas"] for p in range(3)]  # placed now
    for p in range(3):  # every partition led by its preferred replica again
        moves.move_leader("t", p, replicas[p][0])
    down = replicas[1][0]  # partition 1's preferred replica, stopped below
    moves.move_leader("t", 0, next(r for r in replicas[0][1:] if r != down))  # elected back
    moves.move_leader("t", 1, replicas[1][1])
    moves.stop(down)
    client = await connect(bound, next(n for n in (1, 2, 3) if n != down))
    answer = await client.request(BY_NAME["ElectLeaders"], 2,
                                  el.ElectLeadersRequest(election_type=0))
    (t,) = [r for r in answer.replica_election_results if r.topic == "t"]
    assert [(p.partition_id, p.error_code, p.error_message) for p in t.partition_result] == [
        (0, ErrorCode.NONE, None),
        (1, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")]
