"""ListTransactions v0-1 (KIP-664): the transactional ids this broker coordinates, filtered by
state names (unknown names are echoed in UnknownStateFilters and match nothing), producer ids
and, v1 (KIP-994), DurationFilter: only transactions started more than that many ms ago.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.list_transactions import (
    API, ListTransactionsResponse, ListTransactionsState)
from ...transactions import TxnState
from . import Handler

_KNOWN = frozenset(s.wire_name for s in TxnState)


async def list_transactions(ctx, request) -> ListTransactionsResponse:
    from ..txn_routing import txn_error
    listed = ctx.broker.transactions.list_transactions(
        states=request.state_filters, producer_ids=request.producer_id_filters,
        min_duration_ms=request.duration_filter, now_ms=ctx.now_ms())
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE,
        unknown_state_filters=[s for s in request.state_filters if s not in _KNOWN],
        transaction_states=[
            ListTransactionsState(transactional_id=md.transactional_id,
                                  producer_id=md.producer_id,
                                  transaction_state=md.state.wire_name)
            for md in listed if txn_error(ctx, md.transactional_id) is None])


HANDLER = Handler(API, "0-1", list_transactions)
