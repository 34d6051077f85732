"""AddOffsetsToTxn v0-4: adds the group's ``__consumer_offsets`` partition to the transaction
(Kafka's handler calls handleAddPartitionsToTransaction with it), so the commit or abort marker
completes the group's pending transactional offsets. v0-1 get INVALID_PRODUCER_EPOCH where v2+
get PRODUCER_FENCED. Only the id's coordinator answers in a cluster (else NOT_COORDINATOR).
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.add_offsets_to_txn import API, AddOffsetsToTxnResponse
from . import Handler


def knows_producer_fenced(version: int) -> bool:
    return version >= 2


async def add_offsets_to_txn(ctx, request) -> AddOffsetsToTxnResponse:
    from ..txn_routing import txn_error
    broker = ctx.broker
    error = txn_error(ctx, request.transactional_id) if request.transactional_id else None
    if error is None:
        error = broker.transactions.add_partitions(
            request.transactional_id, request.producer_id, request.producer_epoch, (),
            ctx.now_ms(), group_id=request.group_id)
        broker.timers_changed.set()
    if error is ErrorCode.PRODUCER_FENCED and not knows_producer_fenced(ctx.version):
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return AddOffsetsToTxnResponse(error_code=error)


HANDLER = Handler(API, "0-4", add_offsets_to_txn)
