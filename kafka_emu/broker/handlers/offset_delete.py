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


def render(order, rejected, result) -> OffsetDeleteResponse:
    if result is not None and result.error != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=result.error)
    errors = dict(rejected)
    if result is not None:
        errors.update({(p.topic, p.partition): p.error for p in result.partitions})
    topics: dict[str, list] = {}
    for topic, partition in order:
        topics.setdefault(topic, []).append(OffsetDeleteResponsePartition(
            partition_index=partition, error_code=errors.get((topic, partition), ErrorCode.NONE)))
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=[
        OffsetDeleteResponseTopic(name=name, partitions=parts) for name, parts in topics.items()])


async def offset_delete(ctx, request) -> OffsetDeleteResponse:
    order, rejected, valid = [], {}, []
    for t in request.topics:
        for p in t.partitions:
            order.append((t.name, p.partition_index))
            if ctx.broker.topics.exists(t.name, p.partition_index):
                valid.append((t.name, p.partition_index))
            else:
                rejected[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    command = c.OffsetDelete(request_id=ctx.request_id, group_id=request.group_id,
                             partitions=tuple(valid))
    return await ctx.submit(command, partial(render, order, rejected))


HANDLER = Handler(API, "0", offset_delete)
