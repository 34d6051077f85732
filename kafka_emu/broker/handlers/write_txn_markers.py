"""WriteTxnMarkers v1-2: write COMMIT/ABORT markers to partitions this broker leads, per
(producer, partition) an error code: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, or what
the log refuses (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED). The emulator's own
coordinator writes its markers directly (broker/txn_markers.py); this request is how an admin
client aborts a hanging transaction (kafka-transactions.sh abort, Admin.abortTransaction). A
marker on a ``__consumer_offsets`` partition also completes the producer's pending offsets in
the groups on that partition, as Kafka's GroupCoordinator.onTransactionCompleted does. v2
carries the marker's transaction version (0/1 legacy, 2 transactions v2).
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.write_txn_markers import (
    API, WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse)
from . import Handler
from ..cluster import OFFSETS_TOPIC
from ._common import leader_log


def _write(ctx, marker, topic: str, index: int) -> ErrorCode:
    broker = ctx.broker
    try:
        log = leader_log(ctx, topic, index)
        log.append_marker(producer_id=marker.producer_id, producer_epoch=marker.producer_epoch,
                          coordinator_epoch=marker.coordinator_epoch,
                          commit=marker.transaction_result, now_ms=ctx.now_ms(),
                          transaction_version=2 if marker.transaction_version >= 2 else 1)
    except KafkaError as exc:
        return exc.code
    broker.topics.notify_append()
    if topic == OFFSETS_TOPIC:
        from ...coordinator import CompleteTxnOffsets
        coordinator, cluster = broker.coordinator, broker.cluster
        for group_id in coordinator.all_group_ids():
            if cluster.offsets_partition(group_id) == index:
                broker.route(coordinator.handle(CompleteTxnOffsets(
                    request_id=-1, group_id=group_id, producer_id=marker.producer_id,
                    producer_epoch=marker.producer_epoch,
                    committed=marker.transaction_result), ctx.now_ms()))
    return ErrorCode.NONE


async def write_txn_markers(ctx, request) -> WriteTxnMarkersResponse:
    results = []
    for marker in request.markers:
        topics = [WritableTxnMarkerTopicResult(name=t.name, partitions=[
            WritableTxnMarkerPartitionResult(partition_index=p,
                                             error_code=_write(ctx, marker, t.name, p))
            for p in t.partition_indexes]) for t in marker.topics]
        results.append(WritableTxnMarkerResult(producer_id=marker.producer_id, topics=topics))
    return WriteTxnMarkersResponse(markers=results)


HANDLER = Handler(API, "1-2", write_txn_markers)
