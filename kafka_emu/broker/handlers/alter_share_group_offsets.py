"""AlterShareGroupOffsets v0 (KIP-932): the share-partitions' start offsets of an EMPTY share
group start over at the given offsets, nothing in flight (what kafka-share-groups.sh
--reset-offsets sends). Top-level GROUP_ID_NOT_FOUND (no share group of that id) or
NON_EMPTY_GROUP (members present); per partition UNKNOWN_TOPIC_OR_PARTITION."""

from __future__ import annotations

import uuid

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.alter_share_group_offsets import (
    API, AlterShareGroupOffsetsResponse, AlterShareGroupOffsetsResponsePartition,
    AlterShareGroupOffsetsResponseTopic)
from ..share_fetching import share_group_error
from . import Handler
from .share_acknowledge import share_enabled

NO_TOPIC_ID = uuid.UUID(int=0)  # the response's topic id for a topic that does not exist


async def alter_share_group_offsets(ctx, request) -> AlterShareGroupOffsetsResponse:
    if not share_enabled(ctx):
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    fetching = ctx.broker.share_fetching
    fetching.drain_departures()
    refused = share_group_error(ctx, request.group_id, must_be_empty=True)
    if refused is not None:
        return AlterShareGroupOffsetsResponse(error_code=refused[0], error_message=refused[1])
    topics = ctx.broker.topics
    out = []
    for t in request.topics:
        info = topics.lookup(t.topic_name)
        parts = []
        for p in t.partitions:
            try:
                topics.partition(t.topic_name, p.partition_index)
            except KafkaError as exc:
                parts.append(AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=exc.code,
                    error_message=str(exc)))
                continue
            fetching.delivery.alter_start(request.group_id, info.topic_id, p.partition_index,
                                          p.start_offset)
            parts.append(AlterShareGroupOffsetsResponsePartition(
                partition_index=p.partition_index))
        out.append(AlterShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name,
            topic_id=info.topic_id if info is not None else NO_TOPIC_ID,
            partitions=parts))
    return AlterShareGroupOffsetsResponse(responses=out)


HANDLER = Handler(API, "0", alter_share_group_offsets)
