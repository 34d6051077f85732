"""ListConfigResources (KIP-1142) needs DESCRIBE_CONFIGS on the cluster, as Kafka's KafkaApis
checks it: denied, the response carries CLUSTER_AUTHORIZATION_FAILED and lists nothing;
allowed, the topics are listed."""

from __future__ import annotations

from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.security.acls import AclBinding, AclOperation as Op, ResourceType as RT
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON


async def test_list_config_resources_needs_describe_configs_on_the_cluster(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 1})
    broker = bound.broker
    wire = await WireClient.connect(bound.host, bound.port)
    api = BY_NAME["ListConfigResources"]
    request = api.request(resource_types=[2])  # topics
    denied = await wire.request(api, 1, request)
    assert (denied.error_code, denied.config_resources) == (E.CLUSTER_AUTHORIZATION_FAILED, [])
    broker.authorizer.add(AclBinding(   # DESCRIBE is not DESCRIBE_CONFIGS
        resource_type=RT.CLUSTER, resource_name="kafka-cluster", pattern_type=3,
        principal="User:ANONYMOUS", host="*", operation=Op.DESCRIBE, permission=3))
    still = await wire.request(api, 1, request)
    assert still.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    broker.authorizer.add(AclBinding(
        resource_type=RT.CLUSTER, resource_name="kafka-cluster", pattern_type=3,
        principal="User:ANONYMOUS", host="*", operation=Op.DESCRIBE_CONFIGS, permission=3))
    allowed = await wire.request(api, 1, request)
    assert allowed.error_code == 0
    assert [(r.resource_name, r.resource_type) for r in allowed.config_resources] == [("t", 2)]
