"""CreatePartitions v0-3: v2 flexible; v3 may answer THROTTLING_QUOTA_EXCEEDED (never here).

A topic named twice in one request is INVALID_REQUEST for each entry (KafkaApis); the rest is
the controller's checks (``TopicCatalogue.add_partitions``). Manual assignments may name only
this broker. The new partitions are empty; consumers subscribed to the topic rebalance once
their client's next Metadata refresh sees them, as on Kafka.
"""

from __future__ import annotations

from collections import Counter

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.create_partitions import (API, CreatePartitionsResponse,
                                                    CreatePartitionsTopicResult)
from . import Handler


async def create_partitions(ctx, request) -> CreatePartitionsResponse:
    catalogue = ctx.broker.topics.catalogue
    node_id = ctx.broker.config.node_id
    counts = Counter(t.name for t in request.topics)
    results = []
    for t in request.topics:
        try:
            if counts[t.name] > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic in request.")
            if catalogue.get(t.name) is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # Kafka sends no message
            if ctx.broker.cluster.multi and t.assignments is not None:
                nodes = ctx.broker.cluster.nodes
                unknown = sorted({b for a in t.assignments for b in a.broker_ids
                                  if b not in nodes})
                if unknown or any(not a.broker_ids for a in t.assignments):
                    raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"The manual partition assignment includes broker(s) "
                                     f"{unknown} that are not registered.")
            elif t.assignments is not None and any(a.broker_ids != [node_id]
                                                   for a in t.assignments):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Replica assignments must name only broker {node_id}.")
            catalogue.add_partitions(
                t.name, t.count, validate_only=request.validate_only,
                assignments=None if t.assignments is None else len(t.assignments))
        except KafkaError as exc:
            results.append(CreatePartitionsTopicResult(name=t.name, error_code=exc.code,
                                                       error_message=exc.message or None))
            continue
        results.append(CreatePartitionsTopicResult(name=t.name, error_code=ErrorCode.NONE))
    return CreatePartitionsResponse(results=results)


HANDLER = Handler(API, "0-3", create_partitions)
