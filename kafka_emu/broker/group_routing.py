"""Group requests in a cluster: only the group's coordinator serves them.

Kafka's group coordinator answers NOT_COORDINATOR for a group whose ``__consumer_offsets``
partition this broker does not lead, and COORDINATOR_LOAD_IN_PROGRESS while that partition
loads (reference 3.12) -- except Heartbeat, which answers a plain success while loading
(GroupCoordinatorService.heartbeat: "the group is still loading, so blindly respond"). Requests
naming several groups (DescribeGroups, DeleteGroups, ConsumerGroupDescribe, ShareGroupDescribe)
get that error per group, and the coordinator sees only the groups this broker owns; ListGroups
lists only them.

``route`` runs only when the cluster has more than one broker; the single broker's requests go
straight to the coordinator.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .. import coordinator as c  # its names load on first use (the coordinator package)
from ..errors import ErrorCode

# command type -> (result field holding the entries, entry -> group id); made on first use,
# so that importing this module (as every connection's does) does not import the coordinator
_MULTI: dict[type, tuple[str, Callable[[Any], str]]] = {}


def _multi() -> dict[type, tuple[str, Callable[[Any], str]]]:
    if not _MULTI:
        from ..coordinator.consumer import ConsumerGroupDescribe
        from ..coordinator.share.commands import ShareGroupDescribe
        _MULTI.update({
            c.DescribeGroups: ("groups", lambda entry: entry.group_id),
            ConsumerGroupDescribe: ("groups", lambda entry: entry.group_id),
            ShareGroupDescribe: ("groups", lambda entry: entry.group_id),
            c.DeleteGroups: ("results", lambda entry: entry[0]),
        })
    return _MULTI


def error_result(command, error) -> Any:
    return c.error_result(command, error)


def route(ctx, command, render) -> tuple[Any, Callable[[Any], Any], Any]:
    """(command to submit or None, render to use, the response when nothing is submitted)."""
    broker = ctx.broker
    node_id = ctx.connection.node_id
    kind = type(command)
    if kind is c.ListGroups:
        mine = broker.cluster_moves.owned_filter(node_id)
        return command, lambda result: render(attrs.evolve(
            result, groups=tuple(g for g in result.groups if mine(g.group_id)))), None
    multi = _multi().get(kind)
    if multi is not None:
        return _split(broker, node_id, command, render, *multi)
    group_id = getattr(command, "group_id", None)
    if group_id is None:
        return command, render, None
    error = broker.cluster_moves.group_error(node_id, group_id)
    if error is None:
        return command, render, None
    if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS and kind is c.Heartbeat:
        error = ErrorCode.NONE
    return None, render, render(error_result(command, error))


def _split(broker, node_id, command, render, field: str, group_of):
    ids = tuple(command.group_ids)
    errors = {}
    for gid in dict.fromkeys(ids):
        error = broker.cluster_moves.group_error(node_id, gid)
        if error is not None:
            errors[gid] = error
    if not errors:
        return command, render, None
    owned = tuple(g for g in ids if g not in errors)

    def merged(result) -> Any:
        found = {group_of(entry): entry for entry in getattr(result, field)} if result else {}
        order = ids if kind_keeps_duplicates(command) else tuple(dict.fromkeys(ids))
        entries = []
        for gid in order:
            if gid in errors:
                one = error_result(attrs.evolve(command, group_ids=(gid,)),
                                                 errors[gid])
                entries.append(getattr(one, field)[0])
            else:
                entries.append(found[gid])
        template = result if result is not None else error_result(
            attrs.evolve(command, group_ids=()), ErrorCode.NONE)
        return render(attrs.evolve(template, **{field: tuple(entries)}))

    if not owned:
        return None, render, merged(None)
    return attrs.evolve(command, group_ids=owned), merged, None


def kind_keeps_duplicates(command) -> bool:
    """DescribeGroups answers a group named twice twice; DeleteGroups once (a set in Kafka)."""
    return not isinstance(command, c.DeleteGroups)
