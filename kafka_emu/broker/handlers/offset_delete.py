"""OffsetDelete v0: partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION from the front
end; group errors (INVALID_GROUP_ID, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP) are top level."""

from __future__ import annotations

from functools import partial

from ... import coordinator as c
from ...errors import ErrorCode
from ...protocol.messages.offset_delete import (API, OffsetDeleteResponse,
                                                OffsetDeleteResponsePartition,
                                                OffsetDeleteResponseTopic)
from . import Handler
from ._common import by_topic, split_known_partitions


def render(order, rejected, result) -> OffsetDeleteResponse:
    if result.error != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=result.error)
    errors = dict(rejected)
    errors.update({(p.topic, p.partition): p.error for p in result.partitions})
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=by_topic(
        order, errors, OffsetDeleteResponsePartition, OffsetDeleteResponseTopic))


async def offset_delete(ctx, request) -> OffsetDeleteResponse:
    order, rejected, known = split_known_partitions(ctx, request.topics)
    command = c.OffsetDelete(request_id=ctx.request_id, group_id=request.group_id,
                             partitions=tuple((t.name, p.partition_index) for t, p in known))
    return await ctx.submit(command, partial(render, order, rejected))


HANDLER = Handler(API, "0", offset_delete)
