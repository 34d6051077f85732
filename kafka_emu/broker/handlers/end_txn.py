"""EndTxn v0-5: commit or abort. The coordinator moves the transaction to PrepareCommit /
PrepareAbort, the markers are written to every partition in it (and the pending offsets of
every group it added completed), then Complete*; all before the answer here, where Kafka
answers after PrepareX is written and sends the markers after. v5 is transactions v2 (KIP-890
part 2: the epoch is bumped by every EndTxn and returned, retries told apart by epoch), as
KafkaApis decides by version (``ends_with_epoch_bump``). v0-1 get INVALID_PRODUCER_EPOCH where
v2+ get PRODUCER_FENCED. Only the id's coordinator answers in a cluster.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.end_txn import API, EndTxnResponse
from . import Handler


def knows_producer_fenced(version: int) -> bool:
    return version >= 2


def ends_with_epoch_bump(version: int) -> bool:
    return version > 4


async def end_txn(ctx, request) -> EndTxnResponse:
    from ..txn_markers import write_markers
    from ..txn_routing import txn_error
    broker = ctx.broker
    tid = request.transactional_id
    refused = txn_error(ctx, tid) if tid else None
    if refused is not None:
        return EndTxnResponse(error_code=refused)
    now_ms = ctx.now_ms()
    result = broker.transactions.end_txn(
        tid, request.producer_id, request.producer_epoch, request.committed, now_ms,
        transaction_version=2 if ends_with_epoch_bump(ctx.version) else 1)
    write_markers(broker, result.markers, now_ms)
    broker.timers_changed.set()
    error = result.error
    if error is ErrorCode.PRODUCER_FENCED and not knows_producer_fenced(ctx.version):
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return EndTxnResponse(error_code=error, producer_id=result.producer_id,
                          producer_epoch=result.producer_epoch)


HANDLER = Handler(API, "0-5", end_txn)
