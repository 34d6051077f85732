"""Metadata v0-13: v0 an empty topic list means all topics, v1+ null does; v1 controller and
is_internal; v2 cluster id; v4 AllowAutoTopicCreation; v7 leader epoch; v8 authorized
operations (v8-10 also the cluster's, when asked); v10 topic ids in responses; v12 request topics
may name a topic by id only -- in v10-11 a null name or a topic id fails the whole request with
INVALID_REQUEST, as KafkaApis.handleTopicMetadataRequest throws it; v13 top-level ErrorCode.
One broker leads every partition; in a cluster (broker/cluster.py) only live brokers are listed,
each partition with its placed leader, epoch, replicas, ISR and offline replicas
(LEADER_NOT_AVAILABLE while it has no leader). ``__consumer_offsets`` is internal. A topic created by this very request (auto-creation) is
reported with LEADER_NOT_AVAILABLE and no partitions, as Kafka does while creation is in
flight; the client's next Metadata sees it.
"""

from __future__ import annotations

import uuid

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.metadata import (API, AUTHORIZED_OPERATIONS_OMITTED, MetadataResponse,
                                           MetadataResponseBroker, MetadataResponsePartition,
                                           MetadataResponseTopic)
from . import Handler
from ...log.catalogue import INTERNAL_TOPICS
from ..cluster import NO_LEADER, OFFSETS_TOPIC
from ._common import advertised_endpoint, node_endpoint
from ._operations import CLUSTER_OPERATIONS, TOPIC_OPERATIONS

ZERO_UUID = uuid.UUID(int=0)


def empty_list_means_all(version: int) -> bool:
    return version == 0


def may_refuse_auto_creation(version: int) -> bool:
    return version >= 4


def names_topics_by_id(version: int) -> bool:
    return version >= 12


def _refuse_ids_before_v12(version: int, topics) -> None:
    """Kafka's check, topic by topic in request order (the v10-11 schema already allows a null
    name and a topic id, but the broker does not serve either before v12)."""
    for wanted in topics:
        if wanted.name is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Topic name can not be null for version {version}")
        if wanted.topic_id != ZERO_UUID:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Topic IDs are not supported in requests for version {version}")


def has_cluster_operations(version: int) -> bool:
    return 8 <= version <= 10


def _partitions(node_id: int, count: int) -> list:
    return [MetadataResponsePartition(error_code=ErrorCode.NONE, partition_index=i,
                                      leader_id=node_id, leader_epoch=0, replica_nodes=[node_id],
                                      isr_nodes=[node_id]) for i in range(count)]


def _cluster_partitions(cluster, info) -> list:
    """Each partition's leader, epoch, replicas and ISR as the cluster has placed them."""
    nodes = cluster.nodes
    out = []
    for i in range(info.partitions):
        placed = cluster.placement(info.topic_id, info.name, i)
        out.append(MetadataResponsePartition(
            error_code=ErrorCode.NONE if placed.leader != NO_LEADER
            else ErrorCode.LEADER_NOT_AVAILABLE,
            partition_index=i, leader_id=placed.leader, leader_epoch=placed.leader_epoch,
            replica_nodes=list(placed.replicas), isr_nodes=list(placed.isr),
            offline_replicas=[r for r in placed.replicas if not nodes[r].running]))
    return out


def _brokers(ctx) -> list:
    cluster = ctx.broker.cluster
    if not cluster.multi:
        host, port = advertised_endpoint(ctx)
        node = cluster.node(None)
        return [MetadataResponseBroker(node_id=node.node_id, host=host, port=port,
                                       rack=node.rack)]
    out = []
    for node in cluster.live_nodes():
        host, port = node_endpoint(ctx, node)
        out.append(MetadataResponseBroker(node_id=node.node_id, host=host, port=port,
                                          rack=node.rack))
    return out


async def metadata(ctx, request) -> MetadataResponse:
    v = ctx.version
    broker = ctx.broker
    cluster = broker.cluster
    node_id = broker.config.node_id
    topic_ops = (TOPIC_OPERATIONS if v >= 8 and request.include_topic_authorized_operations
                 else AUTHORIZED_OPERATIONS_OMITTED)

    def found(info) -> MetadataResponseTopic:
        partitions = (_cluster_partitions(cluster, info) if cluster.multi
                      else _partitions(node_id, info.partitions))
        return MetadataResponseTopic(error_code=ErrorCode.NONE, name=info.name,
                                     topic_id=info.topic_id,
                                     is_internal=info.name in INTERNAL_TOPICS,
                                     partitions=partitions,
                                     topic_authorized_operations=topic_ops)

    all_topics = request.topics is None or (not request.topics and empty_list_means_all(v))
    if not all_topics and not names_topics_by_id(v):
        _refuse_ids_before_v12(v, request.topics)
    topics = []
    if all_topics:
        topics = [found(info) for info in broker.topics.all()]
    else:
        auto_create = broker.config.auto_create_topics_enable and (
            not may_refuse_auto_creation(v) or request.allow_auto_topic_creation)
        for wanted in request.topics:
            if wanted.name is None and names_topics_by_id(v):
                info = broker.topics.lookup_id(wanted.topic_id)
                topics.append(found(info) if info else MetadataResponseTopic(
                    error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None, topic_id=wanted.topic_id,
                    topic_authorized_operations=topic_ops))
                continue
            info = broker.topics.lookup(wanted.name)
            if info is not None:
                topics.append(found(info))
                continue
            error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if auto_create:
                try:
                    if wanted.name == OFFSETS_TOPIC:  # created as the internal topic it is
                        cluster.offsets_topic()
                    else:
                        broker.topics.auto_create(wanted.name)
                    error = ErrorCode.LEADER_NOT_AVAILABLE
                except KafkaError as exc:
                    error = exc.code
            topics.append(MetadataResponseTopic(error_code=error, name=wanted.name,
                                                topic_authorized_operations=topic_ops))
    cluster_ops = (CLUSTER_OPERATIONS
                   if has_cluster_operations(v) and request.include_cluster_authorized_operations
                   else AUTHORIZED_OPERATIONS_OMITTED)
    return MetadataResponse(
        brokers=_brokers(ctx), cluster_id=broker.config.cluster_id,
        controller_id=cluster.controller_id() if cluster.multi else node_id, topics=topics,
        cluster_authorized_operations=cluster_ops, error_code=ErrorCode.NONE)


HANDLER = Handler(API, "0-13", metadata)
