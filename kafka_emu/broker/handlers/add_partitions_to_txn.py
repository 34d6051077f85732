"""AddPartitionsToTxn v0-5. v0-3 (the client's form): one transaction; every partition of a
topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED, nothing added; else every partition gets the coordinator's one answer.
v4+ (the broker-to-broker form of KIP-890 part 1): several transactions, each either added or
only verified (``verify_only``: per partition NONE or TRANSACTION_ABORTABLE), answered per
transaction under a top-level error. v0-1 get INVALID_PRODUCER_EPOCH where v2+ get
PRODUCER_FENCED (KafkaApis.handleAddPartitionsToTxnRequest). Only the id's coordinator answers
in a cluster (else NOT_COORDINATOR for every partition).
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...log.catalogue import INTERNAL_TOPICS
from ...protocol.messages.add_partitions_to_txn import (
    API, AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult)
from . import Handler


def batches_transactions(version: int) -> bool:
    return version >= 4


def knows_producer_fenced(version: int) -> bool:
    return version >= 2


def _topic_results(order: list[tuple[str, int]], errors: dict) -> list:
    topics: dict[str, list] = {}
    for topic, partition in order:
        topics.setdefault(topic, []).append(AddPartitionsToTxnPartitionResult(
            partition_index=partition, error_code=errors[(topic, partition)]))
    return [AddPartitionsToTxnTopicResult(name=name, results_by_partition=parts)
            for name, parts in topics.items()]


def _one(ctx, tid: str, producer_id: int, producer_epoch: int, topics, verify_only: bool):
    """(partitions in request order, error by partition) for one transaction. A client (v0-3)
    may not add internal topics' partitions: Kafka leaves them out of the topics it authorizes
    for WRITE, so they get TOPIC_AUTHORIZATION_FAILED (AddOffsetsToTxn adds a group's)."""
    from ..txn_routing import txn_error
    broker = ctx.broker
    order = list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))
    refused = txn_error(ctx, tid) if tid else None
    if refused is not None:
        return order, dict.fromkeys(order, refused)
    refused = {}
    if not batches_transactions(ctx.version):
        refused = {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED for tp in order
                   if tp[0] in INTERNAL_TOPICS}
    refused.update({tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for tp in order
                    if tp not in refused and not broker.topics.exists(*tp)})
    if refused:
        return order, {tp: refused.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in order}
    coordinator = broker.transactions
    if verify_only:
        return order, coordinator.verify_partitions(tid, producer_id, producer_epoch, order)
    error = coordinator.add_partitions(tid, producer_id, producer_epoch, order, ctx.now_ms())
    broker.timers_changed.set()
    if error is ErrorCode.PRODUCER_FENCED and not knows_producer_fenced(ctx.version):
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return order, dict.fromkeys(order, error)


async def add_partitions_to_txn(ctx, request) -> AddPartitionsToTxnResponse:
    if not batches_transactions(ctx.version):
        order, errors = _one(ctx, request.v3_and_below_transactional_id,
                             request.v3_and_below_producer_id,
                             request.v3_and_below_producer_epoch,
                             request.v3_and_below_topics, False)
        return AddPartitionsToTxnResponse(
            results_by_topic_v3_and_below=_topic_results(order, errors))
    results = []
    for txn in request.transactions:
        order, errors = _one(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch,
                             txn.topics, txn.verify_only)
        results.append(AddPartitionsToTxnResult(transactional_id=txn.transactional_id,
                                                topic_results=_topic_results(order, errors)))
    return AddPartitionsToTxnResponse(error_code=ErrorCode.NONE, results_by_transaction=results)


HANDLER = Handler(API, "0-5", add_partitions_to_txn)
