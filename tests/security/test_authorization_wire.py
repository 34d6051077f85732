"""Every API's authorization errors over real sockets (issue #38 item 4), as Kafka answers them:
whole requests (GROUP_, CLUSTER_, TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and per entry
(TOPIC_AUTHORIZATION_FAILED for the denied topics while the rest are served), plus the
authorized-operations bitfields computed from the ACLs. The principal is User:ANONYMOUS (a
PLAINTEXT connection), as on Kafka. Responses are decoded by kafka-python's classes too."""

from __future__ import annotations


from kafka.protocol.api_message import ApiMessage

from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import describe_cluster as dc
from kafka_emu.protocol.messages import describe_groups as dg
from kafka_emu.protocol.messages import find_coordinator as fc
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import init_producer_id as ipi
from kafka_emu.protocol.messages import join_group as jg
from kafka_emu.protocol.messages import list_groups as lg
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import produce as pr
from kafka_emu.security.acls import AclBinding, AclOperation as Op, PatternType as PT
from kafka_emu.security.acls import Permission as P, ResourceType as RT
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON

ANON = "User:ANONYMOUS"
NOT_PROVIDED = -(2**31)


def allow(rtype, name, op, principal=ANON, pattern=PT.LITERAL, perm=P.ALLOW):
    return AclBinding(resource_type=rtype, resource_name=name, pattern_type=pattern,
                      principal=principal, host="*", operation=op, permission=perm)


async def setup(start_broker, *acls, topics=None, settings=None):
    bound = await start_broker({**ACLS_ON, **(settings or {})}, topics=topics)
    for acl in acls:
        bound.broker.authorizer.add(acl)
    return bound, await WireClient.connect(bound.host, bound.port)


def kp(module, name, version, frame):
    cls = getattr(__import__(f"kafka.protocol.{module}", fromlist=[name]), name)
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True)


async def raw(client, api, version, body):
    await client.send(BY_NAME[api], version, body)
    return await client.receive_frame()


def join(group="g"):
    return jg.JoinGroupRequest(group_id=group, session_timeout_ms=10000,
                               rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
                               protocols=[jg.JoinGroupRequestProtocol(name="range", metadata=b"")])


async def test_group_apis_without_read_on_the_group(start_broker):
    bound, wire = await setup(start_broker, allow(RT.GROUP, "mine", Op.READ))
    denied = kp("consumer", "JoinGroupResponse", 9, await raw(wire, "JoinGroup", 9, join("g")))
    assert denied.error_code == E.GROUP_AUTHORIZATION_FAILED
    beat = await wire.request(BY_NAME["Heartbeat"], 4, hb.HeartbeatRequest(
        group_id="g", generation_id=1, member_id="m"))
    assert beat.error_code == E.GROUP_AUTHORIZATION_FAILED
    ok = await wire.request(BY_NAME["JoinGroup"], 9, join("mine"))
    assert ok.error_code == E.MEMBER_ID_REQUIRED  # allowed: on to the coordinator
    assert bound.broker.authorizer.denied[(ANON, "JoinGroup")] == 1


async def test_find_coordinator_per_key_and_whole(start_broker):
    bound, wire = await setup(start_broker, allow(RT.GROUP, "ok", Op.DESCRIBE))
    old = await wire.request(BY_NAME["FindCoordinator"], 3, fc.FindCoordinatorRequest(
        key="g", key_type=0))
    assert old.error_code == E.GROUP_AUTHORIZATION_FAILED
    new = await wire.request(BY_NAME["FindCoordinator"], 4, fc.FindCoordinatorRequest(
        key_type=0, coordinator_keys=["ok", "g"]))
    got = {c.key: (c.error_code, c.node_id) for c in new.coordinators}
    assert got == {"ok": (0, 1), "g": (E.GROUP_AUTHORIZATION_FAILED, -1)}
    txn = await wire.request(BY_NAME["FindCoordinator"], 4, fc.FindCoordinatorRequest(
        key_type=1, coordinator_keys=["t1"]))
    assert [c.error_code for c in txn.coordinators] == [E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]


async def test_produce_denied_topics_fail_the_rest_are_written(start_broker):
    bound, wire = await setup(start_broker, allow(RT.TOPIC, "ok", Op.WRITE),
                              topics={"ok": 1, "no": 1})
    from tests.broker.test_cluster_wire import produce_request
    both = produce_request("ok", 0)
    both = pr.ProduceRequest(acks=1, timeout_ms=1000, topic_data=[
        both.topic_data[0], pr.TopicProduceData(name="no", partition_data=[
            pr.PartitionProduceData(index=0, records=both.topic_data[0].partition_data[0].records)])])
    theirs = kp("producer", "ProduceResponse", 9, await raw(wire, "Produce", 9, both))
    got = {(t.name, p.index): (p.error_code, p.base_offset) for t in theirs.responses
           for p in t.partition_responses}
    assert got == {("ok", 0): (0, 0), ("no", 0): (E.TOPIC_AUTHORIZATION_FAILED, -1)}
    assert bound.broker.topics.partition("no", 0).log_end_offset == 0
    txn = pr.ProduceRequest(transactional_id="tx", acks=1, timeout_ms=1000,
                            topic_data=both.topic_data[:1])
    answer = await wire.request(BY_NAME["Produce"], 9, txn)
    assert [p.error_code for t in answer.responses for p in t.partition_responses] == [
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]


async def test_offset_commit_group_then_topics(start_broker):
    bound, wire = await setup(start_broker, allow(RT.GROUP, "g", Op.READ),
                              allow(RT.TOPIC, "ok", Op.READ), topics={"ok": 1, "no": 1})
    request = oc.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                     topics=[oc.OffsetCommitRequestTopic(name=n, partitions=[
                                         oc.OffsetCommitRequestPartition(
                                             partition_index=0, committed_offset=0,
                                             committed_metadata="")]) for n in ("ok", "no")])
    answer = kp("consumer", "OffsetCommitResponse", 8, await raw(wire, "OffsetCommit", 8, request))
    got = {t.name: [p.error_code for p in t.partitions] for t in answer.topics}
    assert got == {"ok": [0], "no": [E.TOPIC_AUTHORIZATION_FAILED]}
    other = await wire.request(BY_NAME["OffsetCommit"], 8, oc.OffsetCommitRequest(
        group_id="other", topics=request.topics))
    assert {p.error_code for t in other.topics for p in t.partitions} == {
        E.GROUP_AUTHORIZATION_FAILED}


async def test_metadata_hides_listed_topics_and_answers_named_ones(start_broker):
    bound, wire = await setup(start_broker, allow(RT.TOPIC, "ok", Op.READ),
                              allow(RT.CLUSTER, "kafka-cluster", Op.DESCRIBE),
                              topics={"ok": 1, "no": 1})
    every = await wire.request(BY_NAME["Metadata"], 12, md.MetadataRequest(
        topics=None, include_topic_authorized_operations=True))
    assert [(t.name, t.topic_authorized_operations) for t in every.topics] == [
        ("ok", (1 << Op.READ) | (1 << Op.DESCRIBE))]
    named = kp("metadata", "MetadataResponse", 12, await raw(wire, "Metadata", 12,
                                                             md.MetadataRequest(topics=[
        md.MetadataRequestTopic(name=n) for n in ("ok", "no", "new")])))
    got = {t.name: (t.error_code, len(t.partitions)) for t in named.topics}
    assert got == {"ok": (0, 1), "no": (E.TOPIC_AUTHORIZATION_FAILED, 0),
                   "new": (E.TOPIC_AUTHORIZATION_FAILED, 0)}
    assert bound.broker.topics.lookup("new") is None  # not auto-created without CREATE
    assert len(named.brokers) == 1
    cluster = await wire.request(BY_NAME["Metadata"], 10, md.MetadataRequest(
        topics=[], include_cluster_authorized_operations=True))
    assert cluster.cluster_authorized_operations == 1 << Op.DESCRIBE


async def test_describe_and_list_groups_and_cluster(start_broker):
    bound, wire = await setup(start_broker, allow(RT.GROUP, "seen", Op.DESCRIBE),
                              allow(RT.GROUP, "seen", Op.READ),
                              allow(RT.GROUP, "hidden", Op.READ, principal="User:bob"))
    for group in ("seen", "hidden"):  # both exist (joined by a super user would do too)
        bound.broker.authorizer.add(allow(RT.GROUP, group, Op.READ))
        await wire.request(BY_NAME["JoinGroup"], 3, join(group))
    described = await wire.request(BY_NAME["DescribeGroups"], 5, dg.DescribeGroupsRequest(
        groups=["seen", "other"], include_authorized_operations=True))
    got = {g.group_id: (g.error_code, g.authorized_operations) for g in described.groups}
    assert got == {"seen": (0, (1 << Op.READ) | (1 << Op.DESCRIBE)),
                   "other": (E.GROUP_AUTHORIZATION_FAILED, NOT_PROVIDED)}
    listed = await wire.request(BY_NAME["ListGroups"], 4, lg.ListGroupsRequest())
    assert sorted(g.group_id for g in listed.groups) == ["hidden", "seen"]  # READ implies DESCRIBE
    bound.broker.authorizer.add(allow(RT.GROUP, "hidden", Op.DESCRIBE, perm=P.DENY))
    listed = await wire.request(BY_NAME["ListGroups"], 4, lg.ListGroupsRequest())
    assert [g.group_id for g in listed.groups] == ["seen"]
    # served to anyone (Kafka's AuthHelper.computeDescribeClusterResponse); no operations
    # without DESCRIBE on the cluster
    bound.broker.authorizer.add(allow(RT.CLUSTER, "kafka-cluster", Op.ALTER_CONFIGS))
    shown = await wire.request(BY_NAME["DescribeCluster"], 1, dc.DescribeClusterRequest(
        include_cluster_authorized_operations=True))
    assert (shown.error_code, shown.cluster_authorized_operations) == (0, 0)
    assert len(shown.brokers) == 1
    bound.broker.authorizer.add(allow(RT.CLUSTER, "kafka-cluster", Op.ALTER))
    ok = await wire.request(BY_NAME["DescribeCluster"], 1, dc.DescribeClusterRequest(
        include_cluster_authorized_operations=True))
    assert ok.error_code == 0
    assert ok.cluster_authorized_operations == ((1 << Op.ALTER) | (1 << Op.DESCRIBE)
                                                | (1 << Op.ALTER_CONFIGS)
                                                | (1 << Op.DESCRIBE_CONFIGS))


async def test_init_producer_id_idempotent_and_transactional(start_broker):
    bound, wire = await setup(start_broker)
    denied = await wire.request(BY_NAME["InitProducerId"], 4, ipi.InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60000))
    assert denied.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    bound.broker.authorizer.add(allow(RT.TOPIC, "any", Op.WRITE, pattern=PT.PREFIXED))
    ok = await wire.request(BY_NAME["InitProducerId"], 4, ipi.InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60000))
    assert ok.error_code == 0 and ok.producer_id >= 0  # WRITE on some topic is enough
    txn = await wire.request(BY_NAME["InitProducerId"], 4, ipi.InitProducerIdRequest(
        transactional_id="tx", transaction_timeout_ms=60000))
    assert txn.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


async def test_allow_everyone_if_no_acl_found(start_broker):
    bound, wire = await setup(start_broker, allow(RT.GROUP, "g", Op.READ, principal="User:bob"),
                              settings={"allow.everyone.if.no.acl.found": "true"})
    free = await wire.request(BY_NAME["JoinGroup"], 9, join("free"))
    assert free.error_code == E.MEMBER_ID_REQUIRED
    taken = await wire.request(BY_NAME["JoinGroup"], 9, join("g"))
    assert taken.error_code == E.GROUP_AUTHORIZATION_FAILED


async def test_denials_reach_the_observer_seam_with_the_principal(start_broker):
    from kafka_emu.broker.events import AuthorizationDenied
    from kafka_emu.trace.schema import to_record
    seen = []
    bound = await start_broker(ACLS_ON, topics={"t": 1}, observer=seen.append)
    bound.broker.authorizer.add(allow(RT.TOPIC, "t", Op.DESCRIBE))
    wire = await WireClient.connect(bound.host, bound.port)
    await wire.request(BY_NAME["JoinGroup"], 9, join("g"))
    denied = [e for e in seen if isinstance(e, AuthorizationDenied)]
    assert [(d.principal, d.api, d.operation, d.resource_type, d.resource_name, d.error_code)
            for d in denied] == [(ANON, "JoinGroup", "READ", "GROUP", "g",
                                  E.GROUP_AUTHORIZATION_FAILED)]
    record = to_record(denied[0])
    assert record["kind"] == "authorization_denied" and record["principal"] == ANON


async def test_emu_acls_are_there_from_the_start(start_broker):
    bound, wire = await setup(start_broker, settings={
        "emu.acls": "ALLOW User:ANONYMOUS READ GROUP:PREFIXED app-",
        "super.users": "User:admin;User:ops"})
    assert bound.broker.authorizer.super_users == {"User:admin", "User:ops"}
    ok = await wire.request(BY_NAME["JoinGroup"], 9, join("app-1"))
    assert ok.error_code == E.MEMBER_ID_REQUIRED
    denied = await wire.request(BY_NAME["JoinGroup"], 9, join("other"))
    assert denied.error_code == E.GROUP_AUTHORIZATION_FAILED


async def test_create_and_delete_topics_as_the_controller_checks(start_broker):
    from kafka_emu.protocol.messages import create_topics as ct
    from kafka_emu.protocol.messages import delete_topics as dt
    bound, wire = await setup(start_broker, allow(RT.TOPIC, "mine-", Op.CREATE,
                                                  pattern=PT.PREFIXED), topics={"old": 1})
    created = await wire.request(BY_NAME["CreateTopics"], 7, ct.CreateTopicsRequest(topics=[
        ct.CreatableTopic(name=n, num_partitions=1, replication_factor=1)
        for n in ("mine-1", "theirs")]))
    got = {t.name: (t.error_code, t.error_message, t.topic_config_error_code, t.configs)
           for t in created.topics}
    assert got == {"mine-1": (0, None, E.TOPIC_AUTHORIZATION_FAILED, []),  # no DESCRIBE_CONFIGS
                   "theirs": (E.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.", 0, [])}
    assert bound.broker.topics.lookup("mine-1") and not bound.broker.topics.lookup("theirs")
    bound.broker.authorizer.add(allow(RT.TOPIC, "mine-", Op.ALTER_CONFIGS, pattern=PT.PREFIXED))
    again = await wire.request(BY_NAME["CreateTopics"], 7, ct.CreateTopicsRequest(topics=[
        ct.CreatableTopic(name="mine-2", num_partitions=1, replication_factor=1)]))
    assert again.topics[0].topic_config_error_code == 0  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    denied = await wire.request(BY_NAME["DeleteTopics"], 6, dt.DeleteTopicsRequest(topics=[
        dt.DeleteTopicState(name="old")]))
    assert [r.error_code for r in denied.responses] == [E.TOPIC_AUTHORIZATION_FAILED]
    bound.broker.authorizer.add(allow(RT.CLUSTER, "kafka-cluster", Op.DELETE))
    deleted = await wire.request(BY_NAME["DeleteTopics"], 6, dt.DeleteTopicsRequest(topics=[
        dt.DeleteTopicState(name="old")]))
    assert [r.error_code for r in deleted.responses] == [0]
