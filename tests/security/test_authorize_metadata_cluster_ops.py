"""Metadata v8-10's IncludeClusterAuthorizedOperations under ACLs, as Kafka's KafkaApis answers
it: 0 when the principal may not DESCRIBE the cluster (whatever else it may do there), the
cluster's operations for that principal when it may, and the "not provided" value when not
asked for."""

from __future__ import annotations

from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.security.acls import AclBinding, AclOperation as Op, ResourceType as RT
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON

NOT_PROVIDED = -(1 << 31)  # Integer.MIN_VALUE


def on_cluster(op) -> AclBinding:
    return AclBinding(resource_type=RT.CLUSTER, resource_name="kafka-cluster", pattern_type=3,
                      principal="User:ANONYMOUS", host="*", operation=op, permission=3)


async def test_cluster_operations_are_zero_without_describe_on_the_cluster(start_broker):
    bound = await start_broker(ACLS_ON)
    wire = await WireClient.connect(bound.host, bound.port)
    bound.broker.authorizer.add(on_cluster(Op.ALTER_CONFIGS))  # implies DESCRIBE_CONFIGS only

    async def cluster_ops(version, ask=True):
        response = await wire.request(BY_NAME["Metadata"], version, md.MetadataRequest(
            topics=[], include_cluster_authorized_operations=ask))
        assert response.brokers  # the request itself is served
        return response.cluster_authorized_operations

    for version in (8, 9, 10):
        assert await cluster_ops(version) == 0
        assert await cluster_ops(version, ask=False) == NOT_PROVIDED
    bound.broker.authorizer.add(on_cluster(Op.DESCRIBE))
    assert await cluster_ops(10) == ((1 << Op.DESCRIBE) | (1 << Op.ALTER_CONFIGS)
                                     | (1 << Op.DESCRIBE_CONFIGS))
