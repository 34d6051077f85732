"""DescribeTopicPartitions v0 (KIP-966): topics' partitions, paged. Topics are answered in name
order starting at the cursor's topic (and partition); at most ResponsePartitionLimit
partitions go out, capped at 2000 as Kafka caps it (max.request.partition.size.limit), and
NextCursor says where to resume. An empty topic list means every topic. A missing topic is
UNKNOWN_TOPIC_OR_PARTITION with no partitions (INVALID_TOPIC_EXCEPTION if the name could never
be a topic's), and is only looked up while the budget lasts: once it is spent, the cursor points
at the next topic, known or not. A partition without a leader carries no error, only leader -1
(Kafka sets LEADER_NOT_AVAILABLE in Metadata, not here).

A request Kafka refuses as a whole (InvalidRequestException in
DescribeTopicPartitionsRequestHandler) is INVALID_REQUEST for every topic it names: a cursor
whose topic is not among the requested topics, or whose partition index is negative.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...log.catalogue import INTERNAL_TOPICS, topic_name_error
from ...protocol.messages.describe_topic_partitions import (
    API, Cursor, DescribeTopicPartitionsResponse, DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic)
from . import Handler
from ._operations import TOPIC_OPERATIONS

PARTITION_LIMIT_MAX = 2000  # max.request.partition.size.limit's default


async def describe_topic_partitions(ctx, request) -> DescribeTopicPartitionsResponse:
    catalogue = ctx.broker.topics.catalogue
    node_id = ctx.broker.config.node_id
    cluster = ctx.broker.cluster
    names = sorted({t.name for t in request.topics} if request.topics
                   else {t.name for t in catalogue})
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
        if request.topics and cursor.topic_name not in names:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "DescribeTopicPartitionsRequest topic "
                             f"list should contain the cursor topic: {cursor.topic_name}")
        if cursor.partition_index < 0:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "DescribeTopicPartitionsRequest cursor "
                             f"partition must be valid: {cursor.partition_index}")
    budget = max(1, min(request.response_partition_limit, PARTITION_LIMIT_MAX))
    topics, next_cursor = [], None
    for name in names:
        if budget == 0:  # the previous topics took it all (the cursor's topic always comes first)
            next_cursor = Cursor(topic_name=name, partition_index=0)
            break
        topic = catalogue.get(name)
        if topic is None:
            topics.append(DescribeTopicPartitionsResponseTopic(
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if topic_name_error(name) is None
                else ErrorCode.INVALID_TOPIC_EXCEPTION,
                name=name, is_internal=name in INTERNAL_TOPICS))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        end = min(topic.num_partitions, start + budget)
        if cluster.multi:
            partitions = []
            for i in range(start, end):
                placed = cluster.placement(topic.topic_id, name, i)
                partitions.append(DescribeTopicPartitionsResponsePartition(
                    error_code=ErrorCode.NONE, partition_index=i, leader_id=placed.leader,
                    leader_epoch=placed.leader_epoch, replica_nodes=list(placed.replicas),
                    isr_nodes=list(placed.isr), eligible_leader_replicas=[], last_known_elr=[],
                    offline_replicas=[r for r in placed.replicas
                                      if not cluster.nodes[r].running]))
        else:
            partitions = [DescribeTopicPartitionsResponsePartition(
                error_code=ErrorCode.NONE, partition_index=i, leader_id=node_id,
                leader_epoch=topic.partitions[i].leader_epoch, replica_nodes=[node_id],
                isr_nodes=[node_id], eligible_leader_replicas=[], last_known_elr=[])
                for i in range(start, end)]
        budget -= len(partitions)
        topics.append(DescribeTopicPartitionsResponseTopic(
            error_code=ErrorCode.NONE, name=name, topic_id=topic.topic_id,
            is_internal=topic.is_internal, partitions=partitions,
            topic_authorized_operations=TOPIC_OPERATIONS))
        if end < topic.num_partitions:
            next_cursor = Cursor(topic_name=name, partition_index=end)
            break
    return DescribeTopicPartitionsResponse(topics=topics, next_cursor=next_cursor)


HANDLER = Handler(API, "0", describe_topic_partitions)
