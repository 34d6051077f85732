"""Fetch v4-18: v5 log start offset; v7 sessions (answered sessionless: session id 0, which
KIP-227 clients treat as "no session", so every fetch is a full one); v11 rack / preferred
replica; v12 flexible; v13 topic ids instead of names; v15 replica state; v18 a follower's
high watermark (KIP-1166), which a consumer leaves at its default and the leader has no use for here.

In a cluster, a partition this broker does not lead is NOT_LEADER_OR_FOLLOWER, and a
current_leader_epoch (v9+) behind or ahead of the leader's is FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH (broker/cluster.py).

Whole batches from each partition's fetch offset, bounded by partition_max_bytes and the
response's max_bytes, but the first partition with data returns at least one batch even if it
is larger (Kafka's minOneMessage). Until min_bytes are available the request waits up to
max_wait_ms, woken by Produce (Topics.data_arrived), never by polling. The batches are never
joined or copied here: each partition's records are the stored ``bytes`` objects in a
RecordsParts, which the connection writes to the socket as they are (protocol/spliced.py).

Isolation level 1 (read_committed, v4+): only batches below each partition's last stable
offset, with the aborted transactions overlapping the batches returned (producer id, first
offset), as UnifiedLog.read(maxOffset = LSO) with addAbortedTransactions; an empty read gets an
empty list. read_uncommitted gets null. last_stable_offset is reported at either level.
"""

from __future__ import annotations

import trio

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.fetch import (API, AbortedTransaction, FetchableTopicResponse,
                                        FetchResponse, PartitionData)
from ...protocol.spliced import RecordsParts
from . import Handler

READ_COMMITTED = 1


def uses_topic_ids(version: int) -> bool:
    return version >= 13


def _error(index: int, code: ErrorCode) -> PartitionData:
    return PartitionData(partition_index=index, error_code=code, high_watermark=-1,
                         last_stable_offset=-1, log_start_offset=-1, records=b"")


def _read_all(ctx, request) -> tuple[list[FetchableTopicResponse], int]:
    topics = ctx.broker.topics
    cluster = ctx.broker.cluster
    node_id = ctx.connection.node_id
    by_id = uses_topic_ids(ctx.version)
    budget = request.max_bytes
    min_one = True
    total = 0
    responses = []
    committed = request.isolation_level == READ_COMMITTED
    aborted: list | None = None
    for t in request.topics:
        parts = []
        for p in t.partitions:
            try:
                log = (topics.partition_by_id(t.topic_id, p.partition) if by_id
                       else topics.partition(t.topic, p.partition))
            except KafkaError as exc:
                parts.append(_error(p.partition, exc.code))
                continue
            if cluster.multi:
                refused = (cluster.check_partition_id(node_id, t.topic_id, p.partition,
                                                      p.current_leader_epoch) if by_id else
                           cluster.check_partition(node_id, t.topic, p.partition,
                                                   p.current_leader_epoch))
                if refused is not None:
                    parts.append(_error(p.partition, refused))
                    continue
            try:
                if committed:
                    batches, size, hwm, found = log.read_committed(
                        p.fetch_offset, min(p.partition_max_bytes, budget), min_one=min_one)
                    aborted = [AbortedTransaction(producer_id=a.producer_id,
                                                  first_offset=a.first_offset) for a in found]
                else:
                    batches, size, hwm = log.read_sized(
                        p.fetch_offset, min(p.partition_max_bytes, budget), min_one=min_one)
            except KafkaError as exc:
                parts.append(_error(p.partition, exc.code))
                continue
            if size:
                min_one = False
                budget = max(budget - size, 0)
                total += size
                # the stored batches go to the socket as they are (protocol/spliced.py)
                records: RecordsParts | bytes = RecordsParts(batches, size)
            else:
                records = b""
            parts.append(PartitionData(
                partition_index=p.partition, error_code=ErrorCode.NONE, high_watermark=hwm,
                last_stable_offset=log.last_stable_offset,
                log_start_offset=log.log_start_offset, aborted_transactions=aborted,
                records=records))
        responses.append(FetchableTopicResponse(topic=t.topic if not by_id else "",
                                                topic_id=t.topic_id, partitions=parts))
    return responses, total


def _has_error(responses) -> bool:
    return any(p.error_code for t in responses for p in t.partitions)


async def fetch(ctx, request) -> FetchResponse:
    topics = ctx.broker.topics
    wanted = max(request.min_bytes, 1)
    arrived = topics.data_arrived  # taken before reading, so no append is missed
    responses, total = _read_all(ctx, request)
    if total < wanted and not _has_error(responses) and request.max_wait_ms > 0:
        async def long_poll():
            # Wall time, also under the control plane's clock: an I/O wait, not group semantics.
            nonlocal arrived, responses, total
            with trio.move_on_after(request.max_wait_ms / 1000):
                while True:
                    await arrived.wait()
                    arrived = topics.data_arrived
                    responses, total = _read_all(ctx, request)
                    if total >= wanted or _has_error(responses):
                        return
            responses, _ = _read_all(ctx, request)  # max_wait_ms is up: whatever is there now
        await ctx.park(long_poll)
    return FetchResponse(error_code=ErrorCode.NONE, session_id=0, responses=responses)


HANDLER = Handler(API, "4-18", fetch)
