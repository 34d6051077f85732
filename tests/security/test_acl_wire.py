"""CreateAcls, DescribeAcls and DeleteAcls over real sockets (issue #38 item 4): Kafka's
validation errors, SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without
ALTER/DESCRIBE on the cluster; kafka-python's protocol classes encode the requests and decode
the responses independently of our codec."""

from __future__ import annotations

from kafka.protocol.admin import CreateAclsRequest as KpCreate
from kafka.protocol.admin import CreateAclsResponse as KpCreateResponse
from kafka.protocol.admin import DeleteAclsResponse as KpDeleteResponse
from kafka.protocol.admin import DescribeAclsResponse as KpDescribeResponse
from kafka.protocol.api_message import ApiMessage

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import encode
from kafka_emu.protocol.messages import create_acls as ca
from kafka_emu.protocol.messages import delete_acls as da
from kafka_emu.protocol.messages import describe_acls as dsa
from kafka_emu.security.acls import AclBinding
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON

CREATE, DESCRIBE, DELETE = BY_NAME["CreateAcls"], BY_NAME["DescribeAcls"], BY_NAME["DeleteAcls"]
TOPIC, GROUP, CLUSTER = 2, 3, 4
LITERAL, PREFIXED, ANY, MATCH = 3, 4, 1, 2
READ, WRITE, ALTER, DESCRIBE_OP = 3, 4, 7, 8
ALLOW, DENY = 3, 2


def creation(rtype=TOPIC, name="t", pattern=LITERAL, principal="User:alice", host="*", op=READ,
             perm=ALLOW):
    return ca.AclCreation(resource_type=rtype, resource_name=name, resource_pattern_type=pattern,
                          principal=principal, host=host, operation=op, permission_type=perm)


def kp(cls, version, frame):
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True)


async def raw(client, api, version, body):
    await client.send(api, version, body)
    return await client.receive_frame()


async def admin(start_broker, extra=None):
    # ANONYMOUS is the super user: it may alter ACLs; nothing is denied to it
    bound = await start_broker({**ACLS_ON, "super.users": "User:ANONYMOUS", **(extra or {})})
    return bound, await WireClient.connect(bound.host, bound.port)


async def test_create_validates_as_kafka_and_describe_lists_by_resource(start_broker):
    bound, wire = await admin(start_broker)
    request = ca.CreateAclsRequest(creations=[
        creation(), creation(op=WRITE), creation(name="pre", pattern=PREFIXED, perm=DENY),
        creation(rtype=CLUSTER, name="x"), creation(name=""), creation(pattern=MATCH),
        creation(op=ANY), creation(perm=ANY), creation(principal="alice"),
        creation(rtype=ANY)])
    # kafka-python encodes the same body byte for byte
    theirs = KpCreate(version=3, creations=[KpCreate.AclCreation(
        resource_type=c.resource_type, resource_name=c.resource_name,
        resource_pattern_type=c.resource_pattern_type, principal=c.principal, host=c.host,
        operation=c.operation, permission_type=c.permission_type) for c in request.creations])
    assert theirs.encode(version=3) == encode(request, 3)
    response = kp(KpCreateResponse, 3, await raw(wire, CREATE, 3, request))
    got = [(r.error_code, r.error_message) for r in response.results]
    bad = ErrorCode.INVALID_REQUEST
    assert got == [
        (0, None), (0, None), (0, None),
        (bad, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (bad, "Invalid empty resource name"), (bad, "Invalid patternType MATCH"),
        (bad, "Invalid operation ANY"), (bad, "Invalid permissionType ANY"),
        (bad, "expected a string in format principalType:principalName but got alice"),
        (bad, "Invalid resourceType ANY")]
    assert len(bound.broker.authorizer.bindings()) == 3
    listed = kp(KpDescribeResponse, 3, await raw(wire, DESCRIBE, 3, dsa.DescribeAclsRequest(
        resource_type_filter=ANY, pattern_type_filter=ANY, operation=ANY, permission_type=ANY)))
    assert listed.error_code == 0
    shape = sorted((r.resource_type, r.resource_name, r.pattern_type,
                    sorted((a.principal, a.host, a.operation, a.permission_type) for a in r.acls))
                   for r in listed.resources)
    assert shape == [(TOPIC, "pre", PREFIXED, [("User:alice", "*", READ, DENY)]),
                     (TOPIC, "t", LITERAL, [("User:alice", "*", READ, ALLOW),
                                            ("User:alice", "*", WRITE, ALLOW)])]
    # MATCH: everything that would apply to topic "prefix-1"
    matched = await wire.request(DESCRIBE, 1, dsa.DescribeAclsRequest(
        resource_type_filter=TOPIC, resource_name_filter="prefix-1", pattern_type_filter=MATCH,
        operation=ANY, permission_type=ANY))
    assert [(r.resource_name, r.pattern_type) for r in matched.resources] == [("pre", PREFIXED)]


async def test_delete_answers_per_filter_with_the_acls_it_removed(start_broker):
    bound, wire = await admin(start_broker)
    await wire.request(CREATE, 2, ca.CreateAclsRequest(creations=[
        creation(), creation(op=WRITE), creation(rtype=GROUP, name="g")]))
    filters = [da.DeleteAclsFilter(resource_type_filter=TOPIC, resource_name_filter="t",
                                   pattern_type_filter=LITERAL, operation=WRITE,
                                   permission_type=ANY),
               da.DeleteAclsFilter(resource_type_filter=ANY, pattern_type_filter=ANY,
                                   operation=ANY, permission_type=ANY, principal_filter="User:x")]
    response = kp(KpDeleteResponse, 3, await raw(wire, DELETE, 3,
                                                da.DeleteAclsRequest(filters=filters)))
    first, second = response.filter_results
    assert first.error_code == 0 and second.error_code == 0 and second.matching_acls == []
    assert [(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.operation,
             m.permission_type) for m in first.matching_acls] == [
        (TOPIC, "t", LITERAL, "User:alice", WRITE, ALLOW)]
    assert [(b.resource_type, b.operation) for b in bound.broker.authorizer.bindings()] == [
        (TOPIC, READ), (GROUP, READ)]


async def test_without_an_authorizer_every_acl_api_is_security_disabled(start_broker):
    bound = await start_broker()
    assert bound.broker.authorizer is None
    wire = await WireClient.connect(bound.host, bound.port)
    created = kp(KpCreateResponse, 1, await raw(wire, CREATE, 1, ca.CreateAclsRequest(
        creations=[creation(), creation()])))
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
    described = await wire.request(DESCRIBE, 3, dsa.DescribeAclsRequest(
        resource_type_filter=ANY, pattern_type_filter=ANY, operation=ANY, permission_type=ANY))
    assert (described.error_code, described.error_message) == (
        ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker")
    deleted = await wire.request(DELETE, 3, da.DeleteAclsRequest(filters=[da.DeleteAclsFilter(
        resource_type_filter=ANY, pattern_type_filter=ANY, operation=ANY, permission_type=ANY)]))
    assert [r.error_code for r in deleted.filter_results] == [ErrorCode.SECURITY_DISABLED]


async def test_acl_apis_need_alter_and_describe_on_the_cluster(start_broker):
    bound = await start_broker(ACLS_ON)  # nobody is allowed anything: no ACLs, default deny
    wire = await WireClient.connect(bound.host, bound.port)
    created = kp(KpCreateResponse, 3, await raw(wire, CREATE, 3, ca.CreateAclsRequest(
        creations=[creation(), creation(op=WRITE)])))
    assert [r.error_code for r in created.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED] * 2
    described = await wire.request(DESCRIBE, 3, dsa.DescribeAclsRequest(
        resource_type_filter=ANY, pattern_type_filter=ANY, operation=ANY, permission_type=ANY))
    assert described.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    deleted = await wire.request(DELETE, 3, da.DeleteAclsRequest(filters=[da.DeleteAclsFilter(
        resource_type_filter=ANY, pattern_type_filter=ANY, operation=ANY, permission_type=ANY)]))
    assert [r.error_code for r in deleted.filter_results] == [
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    # ALTER on the cluster for ANONYMOUS lets it create (and implies DESCRIBE: it may list)
    bound.broker.authorizer.add(AclBinding(
        resource_type=CLUSTER, resource_name="kafka-cluster", pattern_type=LITERAL,
        principal="User:ANONYMOUS", host="127.0.0.1", operation=ALTER, permission=ALLOW))
    created = await wire.request(CREATE, 3, ca.CreateAclsRequest(creations=[creation()]))
    assert [r.error_code for r in created.results] == [0]
    described = await wire.request(DESCRIBE, 3, dsa.DescribeAclsRequest(
        resource_type_filter=TOPIC, pattern_type_filter=ANY, operation=ANY, permission_type=ANY))
    assert described.error_code == 0 and [r.resource_name for r in described.resources] == ["t"]


async def test_unknown_elements_close_the_connection_as_kafka_fails_to_parse(start_broker):
    bound, wire = await admin(start_broker)
    await wire.send(CREATE, 3, ca.CreateAclsRequest(creations=[creation(op=0)]))
    assert await wire.receive_frame() is None
    assert bound.broker.authorizer.bindings() == []


async def test_advertised_versions_are_kafka_4s(start_broker):
    bound = await start_broker()
    for api in (CREATE, DESCRIBE, DELETE):
        supported = bound.broker.advertised[api.key]
        assert (supported.lo, supported.hi) == (1, 3)
