"""Every checked API denied, over real sockets (issue #38 item 4): with the authorizer on and no
ACLs (Kafka's default: deny), each request gets the error Kafka answers, where Kafka puts it --
and nothing happens (no topic created, deleted or grown, no offsets committed)."""

from __future__ import annotations

import uuid

import attrs
import pytest

from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import alter_configs as ac
from kafka_emu.protocol.messages import consumer_group_heartbeat as cgh
from kafka_emu.protocol.messages import create_partitions as cp
from kafka_emu.protocol.messages import create_topics as ct
from kafka_emu.protocol.messages import delete_records as dr
from kafka_emu.protocol.messages import delete_topics as dt
from kafka_emu.protocol.messages import describe_configs as dcfg
from kafka_emu.protocol.messages import describe_topic_partitions as dtp
from kafka_emu.protocol.messages import fetch as f
from kafka_emu.protocol.messages import incremental_alter_configs as iac
from kafka_emu.protocol.messages import list_offsets as lo
from kafka_emu.protocol.messages import offset_delete as od
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import offset_for_leader_epoch as ofle
from kafka_emu.security.acls import AclBinding, AclOperation as Op, ResourceType as RT
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON

T, G, C = E.TOPIC_AUTHORIZATION_FAILED, E.GROUP_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED


def errors(message) -> list[int]:
    """Every error code anywhere in a response, outermost first."""
    found = []
    if attrs.has(type(message)):
        for a in attrs.fields(type(message)):
            value = getattr(message, a.name)
            if a.name == "error_code":
                found.append(value)
            else:
                found.extend(errors(value))
    elif isinstance(message, list):
        for item in message:
            found.extend(errors(item))
    return found


def topic_id(broker):
    return broker.topics.lookup("t").topic_id


def apt_topic(name):
    from kafka_emu.protocol.messages import add_partitions_to_txn as apt
    return apt.AddPartitionsToTxnTopic(name=name, partitions=[0])


def txn_topic():
    from kafka_emu.protocol.messages import txn_offset_commit as toc
    return toc.TxnOffsetCommitRequestTopic(name="t", partitions=[
        toc.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                            committed_metadata="")])


CASES = [  # (api, version, request (or a function of the broker), the one error it shows)
    ("Fetch", 12, f.FetchRequest(topics=[f.FetchTopic(topic="t", partitions=[
        f.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000)])]), T),
    ("Fetch", 16, lambda b: f.FetchRequest(topics=[f.FetchTopic(topic_id=topic_id(b), partitions=[
        f.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000)])]), T),
    ("ListOffsets", 7, lo.ListOffsetsRequest(replica_id=-1, topics=[lo.ListOffsetsTopic(
        name="t", partitions=[lo.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), T),
    ("OffsetFetch", 7, of.OffsetFetchRequest(group_id="g", topics=None), G),
    ("OffsetFetch", 9, of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(
        group_id="g", topics=None)]), G),
    ("SyncGroup", 5, BY_NAME["SyncGroup"].request(group_id="g", member_id="m"), G),
    ("LeaveGroup", 4, BY_NAME["LeaveGroup"].request(group_id="g"), G),
    ("DeleteGroups", 2, BY_NAME["DeleteGroups"].request(groups_names=["g", "h"]), G),
    ("CreateTopics", 7, ct.CreateTopicsRequest(topics=[ct.CreatableTopic(
        name="new", num_partitions=1, replication_factor=1)]), T),
    ("DeleteTopics", 5, dt.DeleteTopicsRequest(topic_names=["t"]), T),
    ("DeleteTopics", 6, lambda b: dt.DeleteTopicsRequest(topics=[dt.DeleteTopicState(
        topic_id=topic_id(b))]), T),
    ("DeleteRecords", 2, dr.DeleteRecordsRequest(topics=[dr.DeleteRecordsTopic(
        name="t", partitions=[dr.DeleteRecordsPartition(partition_index=0, offset=0)])]), T),
    ("OffsetForLeaderEpoch", 4, ofle.OffsetForLeaderEpochRequest(replica_id=-1, topics=[
        ofle.OffsetForLeaderTopic(topic="t", partitions=[ofle.OffsetForLeaderPartition(
            partition=0, leader_epoch=0)])]), T),
    ("DescribeConfigs", 4, dcfg.DescribeConfigsRequest(resources=[dcfg.DescribeConfigsResource(
        resource_type=2, resource_name="t")]), T),
    ("DescribeConfigs", 4, dcfg.DescribeConfigsRequest(resources=[dcfg.DescribeConfigsResource(
        resource_type=4, resource_name="1")]), C),
    ("DescribeConfigs", 4, dcfg.DescribeConfigsRequest(resources=[dcfg.DescribeConfigsResource(
        resource_type=32, resource_name="g")]), G),
    ("AlterConfigs", 2, ac.AlterConfigsRequest(resources=[ac.AlterConfigsResource(
        resource_type=2, resource_name="t", configs=[])]), T),
    ("IncrementalAlterConfigs", 1, iac.IncrementalAlterConfigsRequest(resources=[
        iac.IncrementalAlterConfigsResource(resource_type=4, resource_name="", configs=[])]), C),
    ("DescribeLogDirs", 4, BY_NAME["DescribeLogDirs"].request(topics=None), C),
    ("CreatePartitions", 3, cp.CreatePartitionsRequest(topics=[cp.CreatePartitionsTopic(
        name="t", count=3)]), T),
    ("ElectLeaders", 2, BY_NAME["ElectLeaders"].request(), C),
    ("OffsetDelete", 0, od.OffsetDeleteRequest(group_id="g", topics=[]), G),
    ("ConsumerGroupHeartbeat", 0, cgh.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=5000,
        subscribed_topic_names=["t"], topic_partitions=[]), G),
    ("ConsumerGroupDescribe", 0, BY_NAME["ConsumerGroupDescribe"].request(group_ids=["g"]), G),
    ("DescribeTopicPartitions", 0, dtp.DescribeTopicPartitionsRequest(topics=[
        dtp.TopicRequest(name="t")]), T),
    ("FindCoordinator", 6, BY_NAME["FindCoordinator"].request(
        key_type=2, coordinator_keys=["g:AAAAAAAAAAAAAAAAAAAAAA:0"]), C),
    ("DescribeGroups", 5, BY_NAME["DescribeGroups"].request(groups=["g"]), G),
    ("Heartbeat", 4, BY_NAME["Heartbeat"].request(group_id="g", member_id="m"), G),
    ("TxnOffsetCommit", 4, BY_NAME["TxnOffsetCommit"].request(
        transactional_id="tx", group_id="g", topics=[txn_topic()]),
     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ("AddPartitionsToTxn", 3, BY_NAME["AddPartitionsToTxn"].request(
        v3_and_below_transactional_id="tx", v3_and_below_producer_id=1,
        v3_and_below_topics=[apt_topic("t")]), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ("AddPartitionsToTxn", 5, BY_NAME["AddPartitionsToTxn"].request(), C),
    ("AddOffsetsToTxn", 4, BY_NAME["AddOffsetsToTxn"].request(transactional_id="tx",
                                                              group_id="g"),
     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ("EndTxn", 4, BY_NAME["EndTxn"].request(transactional_id="tx"),
     E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ("DescribeTransactions", 0, BY_NAME["DescribeTransactions"].request(
        transactional_ids=["tx"]), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ("ShareGroupHeartbeat", 1, BY_NAME["ShareGroupHeartbeat"].request(
        group_id="g", member_id=str(uuid.uuid4()), subscribed_topic_names=["t"]), G),
    ("ShareGroupDescribe", 1, BY_NAME["ShareGroupDescribe"].request(group_ids=["g"]), G),
    ("ShareFetch", 1, BY_NAME["ShareFetch"].request(group_id="g", member_id=str(uuid.uuid4()),
                                                    topics=[]), G),
]


@pytest.mark.parametrize("api,version,request_,error", CASES,
                         ids=[f"{c[0]}-v{c[1]}-{E(c[3]).name}" for c in CASES])
async def test_denied_as_kafka(start_broker, api, version, request_, error):
    bound = await start_broker(ACLS_ON, topics={"t": 2})
    broker = bound.broker
    if callable(request_):
        request_ = request_(broker)
    wire = await WireClient.connect(bound.host, bound.port)
    response = await wire.request(BY_NAME[api], version, request_)
    codes = errors(response)
    assert error in codes and set(codes) <= {error, 0}, codes
    assert broker.topics.lookup("new") is None and broker.topics.lookup("t").partitions == 2
    assert broker.topics.partition("t", 0).log_start_offset == 0
    assert broker.authorizer.denied


def allow(rtype, name, op):
    return AclBinding(resource_type=rtype, resource_name=name, pattern_type=3,
                      principal="User:ANONYMOUS", host="*", operation=op, permission=3)


async def test_offset_fetch_denied_topics_and_listing(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1, "u": 1})
    for acl in (allow(RT.GROUP, "g", Op.READ), allow(RT.TOPIC, "u", Op.READ)):
        bound.broker.authorizer.add(acl)
    wire = await WireClient.connect(bound.host, bound.port)
    named = await wire.request(BY_NAME["OffsetFetch"], 7, of.OffsetFetchRequest(
        group_id="g", topics=[of.OffsetFetchRequestTopic(name=n, partition_indexes=[0])
                              for n in ("t", "u")]))
    assert {t.name: [(p.error_code, p.committed_offset) for p in t.partitions]
            for t in named.topics} == {"t": [(T, -1)], "u": [(0, -1)]}
    # a commit to u, then an all-topics fetch lists u only
    from kafka_emu.protocol.messages import offset_commit as oc
    done = await wire.request(BY_NAME["OffsetCommit"], 8, oc.OffsetCommitRequest(
        group_id="g", topics=[oc.OffsetCommitRequestTopic(name="u", partitions=[
            oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=5,
                                            committed_metadata="")])]))
    assert errors(done) == [0]
    every = await wire.request(BY_NAME["OffsetFetch"], 9, of.OffsetFetchRequest(groups=[
        of.OffsetFetchRequestGroup(group_id="g", topics=None)]))
    assert [(t.name, [p.committed_offset for p in t.partitions])
            for t in every.groups[0].topics] == [("u", [5])]


async def test_consumer_group_heartbeat_needs_describe_on_subscribed_topics(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1, "u": 1})
    for acl in (allow(RT.GROUP, "g", Op.READ), allow(RT.TOPIC, "u", Op.READ)):
        bound.broker.authorizer.add(acl)
    wire = await WireClient.connect(bound.host, bound.port)
    beat = cgh.ConsumerGroupHeartbeatRequest(group_id="g", member_id=str(uuid.uuid4()),
                                             member_epoch=0, rebalance_timeout_ms=5000,
                                             subscribed_topic_names=["u", "t"],
                                             topic_partitions=[])
    denied = await wire.request(BY_NAME["ConsumerGroupHeartbeat"], 0, beat)
    assert denied.error_code == T
    ok = await wire.request(BY_NAME["ConsumerGroupHeartbeat"], 0,
                            attrs.evolve(beat, subscribed_topic_names=["u"]))
    assert ok.error_code == 0 and ok.member_epoch >= 1


async def test_consumer_group_describe_hides_groups_with_undescribable_topics(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1})
    topic_acl = allow(RT.TOPIC, "t", Op.READ)
    for acl in (allow(RT.GROUP, "g", Op.READ), topic_acl):
        bound.broker.authorizer.add(acl)
    wire = await WireClient.connect(bound.host, bound.port)
    joined = await wire.request(BY_NAME["ConsumerGroupHeartbeat"], 0,
                                cgh.ConsumerGroupHeartbeatRequest(
                                    group_id="g", member_id=str(uuid.uuid4()), member_epoch=0,
                                    rebalance_timeout_ms=5000, subscribed_topic_names=["t"],
                                    topic_partitions=[]))
    assert joined.error_code == 0
    describe = BY_NAME["ConsumerGroupDescribe"].request(group_ids=["g"],
                                                        include_authorized_operations=True)
    seen = await wire.request(BY_NAME["ConsumerGroupDescribe"], 1, describe)
    (group,) = seen.groups
    assert group.error_code == 0 and len(group.members) == 1
    assert group.authorized_operations == (1 << Op.READ) | (1 << Op.DESCRIBE)
    from kafka_emu.security.acls import AclFilter
    bound.broker.authorizer.delete(AclFilter(resource_type=RT.TOPIC))
    hidden = await wire.request(BY_NAME["ConsumerGroupDescribe"], 1, describe)
    assert [(g.group_id, g.error_code, g.error_message, g.members) for g in hidden.groups] == [
        ("g", T, "The group has described topic(s) that the client is not authorized to "
                 "describe.", [])]


async def test_add_partitions_to_txn_is_all_or_nothing(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1, "u": 1})
    for acl in (allow(RT.TRANSACTIONAL_ID, "tx", Op.WRITE), allow(RT.TOPIC, "t", Op.WRITE)):
        bound.broker.authorizer.add(acl)
    wire = await WireClient.connect(bound.host, bound.port)
    init = await wire.request(BY_NAME["InitProducerId"], 4, BY_NAME["InitProducerId"].request(
        transactional_id="tx", transaction_timeout_ms=60000))
    assert init.error_code == 0
    added = await wire.request(BY_NAME["AddPartitionsToTxn"], 3, BY_NAME[
        "AddPartitionsToTxn"].request(v3_and_below_transactional_id="tx",
                                      v3_and_below_producer_id=init.producer_id,
                                      v3_and_below_producer_epoch=init.producer_epoch,
                                      v3_and_below_topics=[apt_topic("t"), apt_topic("u")]))
    got = {(t.name, p.partition_index): p.error_code
           for t in added.results_by_topic_v3_and_below for p in t.results_by_partition}
    assert got == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("u", 0): T}
    listed = await wire.request(BY_NAME["ListTransactions"], 1,
                                BY_NAME["ListTransactions"].request())
    assert [s.transactional_id for s in listed.transaction_states] == ["tx"]
    bound.broker.authorizer.add(AclBinding(
        resource_type=RT.TRANSACTIONAL_ID, resource_name="tx", pattern_type=3,
        principal="User:ANONYMOUS", host="*", operation=Op.DESCRIBE, permission=2))
    hidden = await wire.request(BY_NAME["ListTransactions"], 1,
                                BY_NAME["ListTransactions"].request())
    assert hidden.error_code == 0 and hidden.transaction_states == []


async def test_describe_topic_partitions_all_named_denied_lists_nothing_else(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1, "u": 1})
    bound.broker.authorizer.add(allow(RT.TOPIC, "u", Op.DESCRIBE))
    wire = await WireClient.connect(bound.host, bound.port)
    named = await wire.request(BY_NAME["DescribeTopicPartitions"], 0,
                               dtp.DescribeTopicPartitionsRequest(topics=[
                                   dtp.TopicRequest(name="t")]))
    assert [(t.name, t.error_code, t.topic_id.int) for t in named.topics] == [("t", T, 0)]
    every = await wire.request(BY_NAME["DescribeTopicPartitions"], 0,
                               dtp.DescribeTopicPartitionsRequest(topics=[]))
    assert [(t.name, t.error_code) for t in every.topics] == [("u", 0)]
