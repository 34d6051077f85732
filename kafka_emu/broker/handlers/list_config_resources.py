"""ListConfigResources v0-1 (KIP-1142; v0 was KIP-714's ListClientMetricsResources).

As KafkaApis.handleListConfigResources: v0 knows client-metrics resources only; v1 knows topics,
brokers, broker loggers, client metrics and groups, and an empty ResourceTypes means all of
them. A type the version does not know fails the whole request with UNSUPPORTED_VERSION and no
resources. The answer lists groups with configs of their own, client-metrics subscriptions
(kafka-emu has none: it takes no KIP-714 telemetry), one BROKER_LOGGER and one BROKER entry per
registered broker (node id as the name), then every topic, internal ones included, in that
order. Authorization (DESCRIBE_CONFIGS on the cluster) is the ACL table's row, not here.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.list_config_resources import (API, ConfigResource,
                                                        ListConfigResourcesResponse)
from ..resource_configs import ResourceType
from . import Handler

V0_TYPES = (ResourceType.CLIENT_METRICS,)
V1_TYPES = (ResourceType.TOPIC, ResourceType.BROKER, ResourceType.BROKER_LOGGER,
            ResourceType.CLIENT_METRICS, ResourceType.GROUP)


def supported_types(version: int) -> tuple[ResourceType, ...]:
    return V0_TYPES if version == 0 else V1_TYPES


async def list_config_resources(ctx, request) -> ListConfigResourcesResponse:
    supported = supported_types(ctx.version)
    wanted = set(request.resource_types) or set(supported)
    if not wanted <= set(supported):
        return ListConfigResourcesResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    broker = ctx.broker
    found: list[ConfigResource] = []

    def add(names, kind: ResourceType) -> None:
        if kind in wanted:
            found.extend(ConfigResource(resource_name=n, resource_type=kind) for n in names)

    overrides = broker.resource_configs.group_overrides
    add([g for g, values in overrides.items() if values], ResourceType.GROUP)
    node_ids = [str(n.node_id) for n in broker.cluster.nodes.values()]
    add(node_ids, ResourceType.BROKER_LOGGER)
    add(node_ids, ResourceType.BROKER)
    add([t.name for t in broker.topics.catalogue], ResourceType.TOPIC)
    return ListConfigResourcesResponse(error_code=ErrorCode.NONE, config_resources=found)


HANDLER = Handler(API, "0-1", list_config_resources)
