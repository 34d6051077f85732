"""Small helpers shared by handlers: this broker's address, and the partition front end."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from ...errors import ErrorCode, KafkaError
from ..context import RequestContext


def advertised_endpoint(ctx: RequestContext) -> tuple[str, int]:
    """(host, port) to hand to clients: configured, else the address they reached us on."""
    cfg = ctx.broker.config
    if cfg.security.listeners:
        return listener_endpoint(ctx, ctx.broker.cluster.node(ctx.connection.node_id))
    host = cfg.advertised_host or ctx.connection.local_host
    port = cfg.advertised_port or ctx.broker.bound_port
    return host, port


def node_endpoint(ctx: RequestContext, node) -> tuple[str, int]:
    """(host, port) of one broker of a cluster: the advertised host (else the one the client
    reached) and that broker's own port; advertised.port offsets every broker's port alike."""
    cfg = ctx.broker.config
    if cfg.security.listeners:
        return listener_endpoint(ctx, node)
    host = cfg.advertised_host or ctx.connection.local_host
    if cfg.advertised_port:
        return host, cfg.advertised_port + (node.node_id - ctx.broker.cluster.first_node_id)
    return host, node.port


def listener_endpoint(ctx: RequestContext, node) -> tuple[str, int]:
    """(host, port) of ``node`` on the listener the client connected on, as Kafka answers:
    that listener's advertised.listeners entry (its port counting up per broker), else the
    host the client reached and the port that broker bound for the listener."""
    name = ctx.connection.listener
    advertised = ctx.broker.config.security.advertised.get(name)
    host = (advertised and advertised[0]) or ctx.connection.local_host
    if advertised and advertised[1]:
        return host, advertised[1] + (node.node_id - ctx.broker.cluster.first_node_id)
    return host, node.ports.get(name, node.port)


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


def leader_log(ctx: RequestContext, name: str, index: int, current_epoch: int = -1):
    """The log of a partition this broker leads. KafkaError otherwise: UNKNOWN_TOPIC_OR_PARTITION,
    or in a cluster NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH
    (``Cluster.partition_error``; ``current_epoch`` -1: not checked)."""
    log = ctx.broker.topics.partition(name, index)
    cluster = ctx.broker.cluster
    if cluster.multi:
        refused = cluster.check_partition(ctx.connection.node_id, name, index, current_epoch)
        if refused is not None:
            raise KafkaError(refused)
    return log


def per_partition(request_topics: Iterable[Any], name_of: Callable[[Any], str],
                  answer: Callable[[str, Any], Any], failed: Callable[[Any, int], Any],
                  topic_result: Callable[[Any, list], Any]) -> list:
    """The answer of a request that asks something of each partition of each topic (ListOffsets,
    DeleteRecords, OffsetForLeaderEpoch): ``topic_result(topic, partitions)`` per topic, with
    ``answer(topic name, partition)`` per partition in request order -- or, if that raised
    KafkaError, ``failed(partition, error code)``; one partition's error never stops the rest."""
    out = []
    for t in request_topics:
        name = name_of(t)
        parts = []
        for p in t.partitions:
            try:
                parts.append(answer(name, p))
            except KafkaError as exc:
                parts.append(failed(p, exc.code))
        out.append(topic_result(t, parts))
    return out


class NamedPartitions(NamedTuple):
    """A request topic as once_per_partition leaves it (the ``name``/``partitions`` shape of the
    request's own topic structs)."""
    name: str
    partitions: list


def once_per_partition(request_topics: Iterable[Any]) -> list[NamedPartitions]:
    """Each (topic, partition) of a request once, as the partition named last, in the order
    topics and partitions were first named. Kafka answers ListOffsets and DeleteRecords from a map
    filled by partition in request order (ReplicaManager.fetchOffset,
    KafkaApis.handleDeleteRecordsRequest): a partition named twice is answered once, and a topic
    named twice is one topic of the response."""
    latest: dict[tuple[str, int], Any] = {}  # a key keeps its first place, takes the last value
    for t in request_topics:
        for p in t.partitions:
            latest[t.name, p.partition_index] = p
    topics: dict[str, NamedPartitions] = {}
    for (name, _), p in latest.items():
        topics.setdefault(name, NamedPartitions(name, [])).partitions.append(p)
    return list(topics.values())
