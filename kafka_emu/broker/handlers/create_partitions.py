"""CreatePartitions v0-3: v2 flexible; v3 may answer THROTTLING_QUOTA_EXCEEDED (never here).

As ControllerApis.createPartitions: a topic named more than once is answered once, INVALID_REQUEST
"Duplicate topic name.", ahead of the others (which keep request order). Then the controller's
checks in ReplicationControlManager.createPartitions' order: unknown topic, the count
(``TopicCatalogue.add_partitions``), then each manual assignment as
validateManualPartitionAssignment checks it (an empty list, a broker no cluster node is, a
broker named twice, a replica count other than the topic's replication factor, every replica
stopped). The new partitions are empty; consumers subscribed to the topic rebalance once their
client's next Metadata refresh sees them, as on Kafka.
"""

from __future__ import annotations

from collections import Counter

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.create_partitions import (API, CreatePartitionsResponse,
                                                    CreatePartitionsTopicResult)
from . import Handler


def _check_assignments(ctx, topic, assignments) -> None:
    """validateManualPartitionAssignment and the fenced-replicas check, per new partition."""
    cluster = ctx.broker.cluster
    factor = (len(cluster.placement(topic.topic_id, topic.name, 0).replicas) if cluster.multi
              else 1)
    start = topic.num_partitions
    for i, assignment in enumerate(assignments):
        replicas = sorted(assignment.broker_ids)
        if not replicas:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in replicas:
            if broker_id not in cluster.nodes:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes broker {broker_id}, "
                                 "but no such broker is registered.")
            if broker_id == previous:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes the broker "
                                 f"{previous} more than once.")
            previous = broker_id
        if len(replicas) != factor:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment includes a partition with "
                             f"{len(replicas)} replica(s), but this is not consistent with "
                             f"previous partitions, which have {factor} replica(s).")
        if not any(cluster.nodes[b].running for b in replicas):
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "All brokers specified in the manual partition assignment for "
                             f"partition {start + i} are fenced or in controlled shutdown.")


async def create_partitions(ctx, request) -> CreatePartitionsResponse:
    catalogue = ctx.broker.topics.catalogue
    counts = Counter(t.name for t in request.topics)
    results = [CreatePartitionsTopicResult(name=name, error_code=ErrorCode.INVALID_REQUEST,
                                           error_message="Duplicate topic name.")
               for name, n in counts.items() if n > 1]
    for t in request.topics:
        if counts[t.name] > 1:
            continue
        try:
            topic = catalogue.get(t.name)
            if topic is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # Kafka sends no message
            assignments = None if t.assignments is None else len(t.assignments)
            catalogue.add_partitions(t.name, t.count, validate_only=True, assignments=assignments)
            if t.assignments is not None:
                _check_assignments(ctx, topic, t.assignments)
            if not request.validate_only:
                catalogue.add_partitions(t.name, t.count, assignments=assignments)
        except KafkaError as exc:
            results.append(CreatePartitionsTopicResult(name=t.name, error_code=exc.code,
                                                       error_message=exc.message or None))
            continue
        results.append(CreatePartitionsTopicResult(name=t.name, error_code=ErrorCode.NONE))
    return CreatePartitionsResponse(results=results)


HANDLER = Handler(API, "0-3", create_partitions)
