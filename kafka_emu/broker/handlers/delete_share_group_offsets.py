"""DeleteShareGroupOffsets v0 (KIP-932): an EMPTY share group forgets its share-partition
state for whole topics; the next fetch starts again by share.auto.offset.reset. Top-level
GROUP_ID_NOT_FOUND or NON_EMPTY_GROUP; per topic UNKNOWN_TOPIC_OR_PARTITION."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.delete_share_group_offsets import (
    API, DeleteShareGroupOffsetsResponse, DeleteShareGroupOffsetsResponseTopic)
from ..share_fetching import share_group_error
from . import Handler
from .share_acknowledge import share_enabled


async def delete_share_group_offsets(ctx, request) -> DeleteShareGroupOffsetsResponse:
    if not share_enabled(ctx):
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    fetching = ctx.broker.share_fetching
    fetching.drain_departures()
    refused = share_group_error(ctx, request.group_id, must_be_empty=True)
    if refused is not None:
        return DeleteShareGroupOffsetsResponse(error_code=refused[0], error_message=refused[1])
    out = []
    for t in request.topics:
        info = ctx.broker.topics.lookup(t.topic_name)
        if info is None:
            out.append(DeleteShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                error_message="This server does not host this topic-partition."))
            continue
        fetching.delivery.delete(request.group_id, info.topic_id)
        out.append(DeleteShareGroupOffsetsResponseTopic(topic_name=t.topic_name,
                                                        topic_id=info.topic_id))
    return DeleteShareGroupOffsetsResponse(responses=out)


HANDLER = Handler(API, "0", delete_share_group_offsets)
