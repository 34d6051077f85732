"""DescribeProducers v0 (KIP-664): the producers a partition leader remembers -- id, epoch,
last sequence and timestamp, coordinator epoch, and where its open transaction starts (-1:
none), as ReplicaManager.activeProducerState reads them. A partition this broker does not
lead: NOT_LEADER_OR_FOLLOWER; an unknown one UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.describe_producers import (
    API, DescribeProducersPartitionResponse, DescribeProducersProducerState,
    DescribeProducersResponse, DescribeProducersTopicResponse)
from . import Handler
from ._common import leader_log


def _partition(ctx, topic: str, index: int) -> DescribeProducersPartitionResponse:
    try:
        log = leader_log(ctx, topic, index)
    except KafkaError as exc:
        return DescribeProducersPartitionResponse(partition_index=index, error_code=exc.code)
    states = []
    for entry in log.producers.entries.values():
        txn_start = getattr(entry, "txn_first_offset", -1)
        states.append(DescribeProducersProducerState(
            producer_id=entry.producer_id, producer_epoch=entry.epoch,
            last_sequence=entry.last_seq, last_timestamp=entry.last_timestamp,
            coordinator_epoch=getattr(entry, "coordinator_epoch", -1),
            current_txn_start_offset=txn_start if txn_start >= 0 else -1))
    return DescribeProducersPartitionResponse(partition_index=index, error_code=ErrorCode.NONE,
                                              active_producers=states)


async def describe_producers(ctx, request) -> DescribeProducersResponse:
    return DescribeProducersResponse(topics=[
        DescribeProducersTopicResponse(
            name=t.name, partitions=[_partition(ctx, t.name, p) for p in t.partition_indexes])
        for t in request.topics])


HANDLER = Handler(API, "0", describe_producers)
