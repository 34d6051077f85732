"""FindCoordinator v0-6: every key is coordinated by this single broker. v1-3 carry an error
message ("NONE" on success, as Kafka's Errors.NONE.message()); v4+ batch keys (KIP-699) with an
entry per key; the SHARE key type (2) needs v6+, else INVALID_REQUEST.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.find_coordinator import API, Coordinator, FindCoordinatorResponse
from . import Handler
from ._common import advertised_endpoint

SHARE_KEY_TYPE = 2


def batches_keys(version: int) -> bool:
    return version >= 4


def has_error_message(version: int) -> bool:
    return version >= 1


def supports_share_keys(version: int) -> bool:
    return version >= 6


async def find_coordinator(ctx, request) -> FindCoordinatorResponse:
    host, port = advertised_endpoint(ctx)
    node_id = ctx.broker.config.node_id
    error = ErrorCode.NONE
    if request.key_type == SHARE_KEY_TYPE and not supports_share_keys(ctx.version):
        error = ErrorCode.INVALID_REQUEST
    elif request.key_type not in (0, 1, 2):
        error = ErrorCode.INVALID_REQUEST
    if batches_keys(ctx.version):
        return FindCoordinatorResponse(coordinators=[
            Coordinator(key=key, node_id=node_id if not error else -1,
                        host=host if not error else "", port=port if not error else -1,
                        error_code=error, error_message=None if not error else error.message)
            for key in request.coordinator_keys])
    if error:
        return FindCoordinatorResponse(
            error_code=error, node_id=-1, host="", port=-1,
            error_message=error.message if has_error_message(ctx.version) else None)
    return FindCoordinatorResponse(
        error_code=ErrorCode.NONE, node_id=node_id, host=host, port=port,
        error_message=ErrorCode.NONE.message if has_error_message(ctx.version) else None)


HANDLER = Handler(API, "0-6", find_coordinator)
