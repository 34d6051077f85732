"""FindCoordinator v0-6: a single broker coordinates every key; in a cluster a group's
coordinator is the leader of its ``__consumer_offsets`` partition (broker/cluster.py), which the
first group key creates, a transactional id's (key type 1) the leader of its
``__transaction_state`` partition (broker/txn_routing.py), which the first such key creates,
and other keys go to the broker asked. v1-3 carry an error
message ("NONE" on success, as Kafka's Errors.NONE.message()); v4+ batch keys (KIP-699) with an
entry per key; the SHARE key type (2) needs v6+, else INVALID_REQUEST.
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.find_coordinator import API, Coordinator, FindCoordinatorResponse
from . import Handler
from ..cluster import NO_LEADER
from ._common import advertised_endpoint, node_endpoint

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2


def batches_keys(version: int) -> bool:
    return version >= 4


def has_error_message(version: int) -> bool:
    return version >= 1


def supports_share_keys(version: int) -> bool:
    return version >= 6


def _coordinator(ctx, key_type: int, key: str) -> tuple[ErrorCode, int, str, int]:
    """(error, node id, host, port) for one key. A group key creates ``__consumer_offsets`` on
    first need, as Kafka does; in a cluster it names the leader of the group's partition
    (COORDINATOR_NOT_AVAILABLE while that has none)."""
    broker = ctx.broker
    cluster = broker.cluster
    if key_type == GROUP_KEY_TYPE:
        if not cluster.multi:
            cluster.offsets_topic()
        else:
            node_id = cluster.coordinator_of(key)
            if node_id == NO_LEADER:
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
            host, port = node_endpoint(ctx, cluster.nodes[node_id])
            return ErrorCode.NONE, node_id, host, port
    elif key_type == TRANSACTION_KEY_TYPE:
        from ..txn_routing import coordinator_of, transaction_topic
        if not cluster.multi:
            transaction_topic(broker)
        else:
            node_id = coordinator_of(broker, key)
            if node_id == NO_LEADER:
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
            host, port = node_endpoint(ctx, cluster.nodes[node_id])
            return ErrorCode.NONE, node_id, host, port
    host, port = advertised_endpoint(ctx)
    node = cluster.node(ctx.connection.node_id)
    if cluster.multi:
        host, port = node_endpoint(ctx, node)
    return ErrorCode.NONE, node.node_id, host, port


async def find_coordinator(ctx, request) -> FindCoordinatorResponse:
    error = ErrorCode.NONE
    if request.key_type == SHARE_KEY_TYPE and not supports_share_keys(ctx.version):
        error = ErrorCode.INVALID_REQUEST
    elif request.key_type not in (0, 1, 2):
        error = ErrorCode.INVALID_REQUEST
    if batches_keys(ctx.version):
        out = []
        for key in request.coordinator_keys:
            found = (error, -1, "", -1) if error else _coordinator(ctx, request.key_type, key)
            code = found[0]
            out.append(Coordinator(key=key, node_id=found[1], host=found[2], port=found[3],
                                   error_code=code,
                                   error_message=None if not code else code.message))
        return FindCoordinatorResponse(coordinators=out)
    if not error:
        error, node_id, host, port = _coordinator(ctx, request.key_type, request.key)
    if error:
        return FindCoordinatorResponse(
            error_code=error, node_id=-1, host="", port=-1,
            error_message=error.message if has_error_message(ctx.version) else None)
    return FindCoordinatorResponse(
        error_code=ErrorCode.NONE, node_id=node_id, host=host, port=port,
        error_message=ErrorCode.NONE.message if has_error_message(ctx.version) else None)


HANDLER = Handler(API, "0-6", find_coordinator)
