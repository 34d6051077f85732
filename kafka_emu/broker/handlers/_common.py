"""Small helpers shared by handlers: this broker's address, and the partition front end."""

from __future__ import annotations

from ...errors import ErrorCode
from ..context import RequestContext


def advertised_endpoint(ctx: RequestContext) -> tuple[str, int]:
    """(host, port) to hand to clients: configured, else the address they reached us on."""
    cfg = ctx.broker.config
    host = cfg.advertised_host or ctx.connection.local_host
    port = cfg.advertised_port or ctx.broker.bound_port
    return host, port


def node_endpoint(ctx: RequestContext, node) -> tuple[str, int]:
    """(host, port) of one broker of a cluster: the advertised host (else the one the client
    reached) and that broker's own port; advertised.port offsets every broker's port alike."""
    cfg = ctx.broker.config
    host = cfg.advertised_host or ctx.connection.local_host
    if cfg.advertised_port:
        return host, cfg.advertised_port + (node.node_id - ctx.broker.cluster.first_node_id)
    return host, node.port


def java_host(host: str) -> str:
    """Kafka reports a member's ClientHost as Java's InetAddress.toString(): "/127.0.0.1"."""
    return "/" + host


def split_known_partitions(ctx: RequestContext, request_topics):
    """Front-end check of OffsetCommit/OffsetDelete, as KafkaApis does it: partitions of topics
    that do not exist get UNKNOWN_TOPIC_OR_PARTITION and never reach the coordinator.

    Returns (order, errors, known): every (topic, partition) in request order, the errors so far
    by (topic, partition), and the (topic struct, partition struct) pairs that do exist."""
    topics = ctx.broker.topics
    order, errors, known = [], {}, []
    for t in request_topics:
        for p in t.partitions:
            order.append((t.name, p.partition_index))
            if topics.exists(t.name, p.partition_index):
                known.append((t, p))
            else:
                errors[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return order, errors, known


def by_topic(order, errors, make_partition, make_topic) -> list:
    """Per-partition error codes regrouped under their topics, in request order."""
    topics: dict[str, list] = {}
    for topic, partition in order:
        topics.setdefault(topic, []).append(make_partition(
            partition_index=partition, error_code=errors.get((topic, partition), ErrorCode.NONE)))
    return [make_topic(name=name, partitions=parts) for name, parts in topics.items()]
