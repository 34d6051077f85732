"""ListTransactions v0-2 (KIP-664): the transactional ids this broker coordinates, filtered by
state names (unknown names are echoed in UnknownStateFilters and match nothing), producer ids,
v1 (KIP-994) DurationFilter: only transactions started more than that many ms ago, and v2
(KIP-1152) TransactionalIdPattern: only ids the whole pattern matches (empty or null: every id).

Kafka compiles the pattern with java.util.regex and answers INVALID_REGULAR_EXPRESSION for one it
cannot compile. A client-supplied pattern must match in bounded time here (STYLE.md), so it is
RE2 with RE2/J's syntax, as SubscribedTopicRegex is: Java-only constructs (backreferences,
lookaround) are refused as invalid -- a deviation listed in the README and docs/explanation/differences-from-kafka.md.
"""

from __future__ import annotations

from ...coordinator.consumer.regex import compile_topic_regex
from ...errors import ErrorCode
from ...protocol.messages.list_transactions import (
    API, ListTransactionsResponse, ListTransactionsState)
from ...transactions import TxnState
from . import Handler

_KNOWN = frozenset(s.wire_name for s in TxnState)


async def list_transactions(ctx, request) -> ListTransactionsResponse:
    from ..txn_routing import txn_error
    pattern = None
    if request.transactional_id_pattern:
        pattern = compile_topic_regex(request.transactional_id_pattern)  # bounded, cached
        if pattern is None:
            return ListTransactionsResponse(error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                                            unknown_state_filters=[], transaction_states=[])
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
            for md in listed if txn_error(ctx, md.transactional_id) is None
            and (pattern is None or pattern.matches(md.transactional_id))])


HANDLER = Handler(API, "0-2", list_transactions)
