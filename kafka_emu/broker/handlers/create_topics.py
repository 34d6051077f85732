"""CreateTopics v2-7 (v0-1 were removed in Kafka 4.0, KIP-896): v4 num_partitions /
replication_factor -1 mean the broker default; v5 flexible, returns partitions, replication
factor and configs; v7 topic ids. A replication factor above the number of live brokers is
INVALID_REPLICATION_FACTOR, as Kafka answers (one broker: above 1); in a cluster replicas are
placed as broker/cluster.py says (a manual assignment's broker ids are checked and its
replication factor kept, but replicas are placed by the cluster's own spread). A name given twice
in one request gets one INVALID_REQUEST "Duplicate topic name." result after the others (Kafka
4.x's ControllerApis.createTopics). A request for more than 10,000 partitions in total is refused
whole, every topic POLICY_VIOLATION, as Kafka's controller refuses it
(``ReplicationControlManager.validateTotalNumberOfPartitions``), so one request cannot stall
every other client while it builds partitions.
"""

from __future__ import annotations

from collections import Counter

from ...coordinator.java_order import hashmap_order
from ...errors import ErrorCode, KafkaError
from ...protocol.messages.create_topics import API, CreatableTopicResult, CreateTopicsResponse
from . import Handler


def returns_topic_details(version: int) -> bool:
    return version >= 5


# Kafka's controller: MAX_PARTITIONS_PER_BATCH and the message of its PolicyViolationException
MAX_PARTITIONS_PER_REQUEST = 10_000
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."


def _requested_partitions(topics, default_partitions: int) -> int:
    """Kafka's count: assignments if given, else num_partitions (-1: the default; other
    non-positive counts add nothing, they fail later with their own error)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default_partitions
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


def _refuse_all(topics, code: ErrorCode, message: str) -> CreateTopicsResponse:
    return CreateTopicsResponse(topics=[CreatableTopicResult(
        name=t.name, error_code=code, error_message=message) for t in topics])


def _partitions(ctx, topic) -> int:
    """Partition count from num_partitions or a manual assignment (which names only brokers
    of this cluster); the replication factor may be at most the number of live brokers."""
    cluster = ctx.broker.cluster
    node_id = ctx.broker.config.node_id
    live = len(cluster.live_nodes())
    if cluster.multi and topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor "
                             "and replicasAssignments were set. Both cannot be used at the same "
                             "time.")
        for a in topic.assignments:
            unknown = [b for b in a.broker_ids if b not in cluster.nodes]
            if unknown or not a.broker_ids:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes broker(s) "
                                 f"{unknown or '[]'} that are not registered.")
        return len(topic.assignments)
    if cluster.multi and (topic.replication_factor == -1
                          or 1 <= topic.replication_factor <= live):
        return topic.num_partitions
    if topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor "
                             "and replicasAssignments were set. Both cannot be used at the same "
                             "time.")
        if any(a.broker_ids != [node_id] for a in topic.assignments):
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"Replica assignments must name only broker {node_id}.")
        return len(topic.assignments)
    if topic.replication_factor not in (-1, 1):
        if topic.replication_factor <= 0:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             "Replication factor must be larger than 0, or -1 to use the "
                             "default value.")
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                         f"Unable to replicate the partition {topic.replication_factor} time(s): "
                         f"The target replication factor of {topic.replication_factor} cannot be "
                         f"reached because only {live} broker(s) are registered.")
    return topic.num_partitions


def _replication_factor(ctx, topic) -> int:
    if topic.assignments:
        return len(topic.assignments[0].broker_ids)
    if topic.replication_factor == -1:
        return min(ctx.broker.config.default_replication_factor,
                   len(ctx.broker.cluster.live_nodes()))
    return topic.replication_factor


async def create_topics(ctx, request) -> CreateTopicsResponse:
    v = ctx.version
    counts = Counter(t.name for t in request.topics)
    # Kafka's broker forwards only the names given once to the controller (ControllerApis)...
    unique = [t for t in request.topics if counts[t.name] == 1]
    if _requested_partitions(unique, ctx.broker.config.num_partitions) > MAX_PARTITIONS_PER_REQUEST:
        return _refuse_all(request.topics, ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS)
    results = []
    for t in unique:
        try:
            info = ctx.broker.topics.create(
                t.name, _partitions(ctx, t), configs={c.name: c.value for c in t.configs},
                validate_only=request.validate_only)
        except KafkaError as exc:
            results.append(CreatableTopicResult(
                name=t.name, error_code=exc.code, error_message=exc.message))
            continue
        factor = _replication_factor(ctx, t)
        if not request.validate_only:
            ctx.broker.cluster.replication[info.topic_id] = factor
        details = returns_topic_details(v)
        results.append(CreatableTopicResult(
            name=t.name, topic_id=info.topic_id, error_code=ErrorCode.NONE,
            error_message=None,
            num_partitions=info.partitions if details else -1,
            replication_factor=factor if details else -1, configs=[] if details else None))
    # ... and adds one result per duplicated name after the controller's, in the order of its
    # HashSet of those names
    duplicated = hashmap_order(name for name, n in counts.items() if n > 1)
    results += [CreatableTopicResult(name=name, error_code=ErrorCode.INVALID_REQUEST,
                                     error_message="Duplicate topic name.")
                for name in duplicated]
    return CreateTopicsResponse(topics=results)


HANDLER = Handler(API, "2-7", create_topics)
