"""DescribeTransactions v0 (KIP-664): per id its state, producer id and epoch, timeout, start
time and partitions; an empty id INVALID_REQUEST, an unknown one TRANSACTIONAL_ID_NOT_FOUND,
an id another broker coordinates NOT_COORDINATOR (TransactionCoordinator.handleDescribeTransactions).
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.describe_transactions import (
    API, DescribeTransactionsResponse, DescribeTransactionsState, DescribeTransactionsTopicData)
from . import Handler


def _describe(ctx, tid: str) -> DescribeTransactionsState:
    from ..txn_routing import txn_error
    if not tid:
        return DescribeTransactionsState(error_code=ErrorCode.INVALID_REQUEST, transactional_id=tid)
    refused = txn_error(ctx, tid)
    if refused is not None:
        return DescribeTransactionsState(error_code=refused, transactional_id=tid)
    md = ctx.broker.transactions.get(tid)
    if md is None:
        return DescribeTransactionsState(error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                                         transactional_id=tid)
    topics: dict[str, list[int]] = {}
    for topic, partition in sorted(md.partitions):
        topics.setdefault(topic, []).append(partition)
    return DescribeTransactionsState(
        error_code=ErrorCode.NONE, transactional_id=tid, transaction_state=md.state.wire_name,
        transaction_timeout_ms=md.timeout_ms, transaction_start_time_ms=md.start_ms,
        producer_id=md.producer_id, producer_epoch=md.producer_epoch,
        topics=[DescribeTransactionsTopicData(topic=t, partitions=p) for t, p in topics.items()])


async def describe_transactions(ctx, request) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(
        transaction_states=[_describe(ctx, tid) for tid in request.transactional_ids])


HANDLER = Handler(API, "0", describe_transactions)
