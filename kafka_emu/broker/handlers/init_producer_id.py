"""InitProducerId v0-5: idempotent producers get a fresh producer id with epoch 0.
Transactions are out of scope: a transactional id is refused with
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, a fatal error clients report clearly instead of retrying.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.init_producer_id import API, InitProducerIdResponse
from . import Handler


async def init_producer_id(ctx, request) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        return InitProducerIdResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                      producer_id=-1, producer_epoch=-1)
    pid = ctx.broker.topics.producer_ids.init_producer_id(
        producer_id=request.producer_id, producer_epoch=request.producer_epoch)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=pid.producer_id,
                                  producer_epoch=pid.producer_epoch)


HANDLER = Handler(API, "0-5", init_producer_id)
