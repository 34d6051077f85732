"""InitProducerId v0-5: without a transactional id, a fresh producer id with epoch 0 (the
idempotent producer); with one, the transaction coordinator (kafka_emu/transactions/): epoch
bumps, fencing, recovery of an ongoing transaction (aborted first, CONCURRENT_TRANSACTIONS
until the client retries). v3+ may name the producer id and epoch it has (KIP-360): both -1 or
neither, else INVALID_REQUEST (KafkaApis.handleInitProducerIdRequest). v0-3 get
INVALID_PRODUCER_EPOCH where v4+ get PRODUCER_FENCED. In a cluster only the id's coordinator
(the leader of its ``__transaction_state`` partition) answers; others NOT_COORDINATOR.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.init_producer_id import API, InitProducerIdResponse
from . import Handler

NO_ID = -1


def knows_producer_fenced(version: int) -> bool:
    return version >= 4


def _failed(error: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=error, producer_id=NO_ID, producer_epoch=NO_ID)


async def init_producer_id(ctx, request) -> InitProducerIdResponse:
    pid, epoch = request.producer_id, request.producer_epoch
    if (pid == NO_ID) != (epoch == NO_ID):
        return _failed(ErrorCode.INVALID_REQUEST)
    tid = request.transactional_id
    if tid is None:
        got = ctx.broker.topics.producer_ids.init_producer_id(producer_id=pid,
                                                               producer_epoch=epoch)
        return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=got.producer_id,
                                      producer_epoch=got.producer_epoch)
    from ..txn_markers import write_markers
    from ..txn_routing import txn_error
    refused = txn_error(ctx, tid) if tid else None
    if refused is not None:
        return _failed(refused)
    broker, now_ms = ctx.broker, ctx.now_ms()
    result = broker.transactions.init_producer_id(
        tid, request.transaction_timeout_ms, None if pid == NO_ID else (pid, epoch), now_ms)
    write_markers(broker, result.markers, now_ms)
    broker.timers_changed.set()
    error = result.error
    if error is ErrorCode.PRODUCER_FENCED and not knows_producer_fenced(ctx.version):
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return InitProducerIdResponse(error_code=error, producer_id=result.producer_id,
                                  producer_epoch=result.producer_epoch)


HANDLER = Handler(API, "0-5", init_producer_id)
