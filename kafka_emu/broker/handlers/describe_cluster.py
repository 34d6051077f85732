"""DescribeCluster v0-2 (KIP-700; v1 EndpointType, KIP-919; v2 IncludeFencedBrokers, KIP-1073). One broker is the whole cluster and its
own controller; in a cluster (broker/cluster.py) every running broker is listed and the lowest
running node id is reported as the controller. Asking for controllers (EndpointType 2) from a broker listener is
MISMATCHED_ENDPOINT_TYPE, as Kafka answers; an unknown type is UNSUPPORTED_ENDPOINT_TYPE.
A stopped broker of a cluster is what KRaft calls fenced (registered, not serving): listed with
IsFenced only when v2 asks for fenced brokers, as KafkaApis.handleDescribeCluster does.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.describe_cluster import (API, DescribeClusterBroker,
                                                   DescribeClusterResponse)
from ...protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from . import Handler
from ._common import advertised_endpoint, node_endpoint
from ._operations import CLUSTER_OPERATIONS

BROKERS, CONTROLLERS = 1, 2


async def describe_cluster(ctx, request) -> DescribeClusterResponse:
    broker = ctx.broker
    if request.endpoint_type != BROKERS:
        # AuthHelper.computeDescribeClusterResponse: only the error code and message are set
        # (no cluster id, the default endpoint type), which is the one error-response builder's
        # shape for DescribeCluster
        if request.endpoint_type == CONTROLLERS:
            raise KafkaError(ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                             "The request was sent to an endpoint of type BROKER, but we wanted "
                             "an endpoint of type CONTROLLER")
        raise KafkaError(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                         f"Unsupported endpoint type {request.endpoint_type}")
    cluster = broker.cluster
    if cluster.multi:
        controller_id = cluster.controller_id()
        listed = [n for n in cluster.nodes.values() if n.running or request.include_fenced_brokers]
        brokers = [DescribeClusterBroker(broker_id=n.node_id, host=h, port=p, rack=n.rack,
                                         is_fenced=not n.running)
                   for n in listed for h, p in [node_endpoint(ctx, n)]]
    else:
        host, port = advertised_endpoint(ctx)
        node = cluster.node(None)
        controller_id = node.node_id
        brokers = [DescribeClusterBroker(broker_id=node.node_id, host=host, port=port,
                                         rack=node.rack)]
    return DescribeClusterResponse(
        error_code=ErrorCode.NONE, endpoint_type=BROKERS, cluster_id=broker.config.cluster_id,
        controller_id=controller_id, brokers=brokers,
        cluster_authorized_operations=(CLUSTER_OPERATIONS
                                       if request.include_cluster_authorized_operations
                                       else AUTHORIZED_OPERATIONS_OMITTED))


HANDLER = Handler(API, "0-2", describe_cluster)
