"""Group operations: view, expire, stop honouring heartbeats, rebalance, remove, delete, offsets.

Members are named by ``member_id`` or by ``group_instance_id`` (exactly one). Unknown groups and
members are 404; a group whose state forbids the change is 409; nothing changes on an error.
"""

from __future__ import annotations

from typing import Any

import attrs

from ... import coordinator as c
from .. import groups
from .. import results as r
from ..operations import INT32_MAX, INT64_MAX, NoParams, check_bounds, operation


@attrs.frozen(kw_only=True)
class GroupParams:
    group_id: str


@attrs.frozen(kw_only=True)
class MemberParams:
    group_id: str
    member_id: str | None = None
    group_instance_id: str | None = None


@attrs.frozen(kw_only=True)
class IgnoreHeartbeatsParams:
    group_id: str
    member_id: str | None = None
    group_instance_id: str | None = None
    ignore: bool = True  # false: honour its heartbeats again


@attrs.frozen(kw_only=True)
class RebalanceParams:
    group_id: str
    reason: str = "rebalance triggered by the control plane"


@attrs.frozen(kw_only=True)
class RemoveStaticParams:
    group_id: str
    group_instance_id: str
    reason: str | None = None


@attrs.frozen(kw_only=True)
class DeleteParams:
    group_id: str
    force: bool = False  # also when members are left: they are removed first


@attrs.frozen(kw_only=True)
class SetOffsetsParams:
    group_id: str
    # {"topic", "partition", "offset"[, "metadata"]} objects, or "topic:partition=offset" strings
    offsets: tuple[Any, ...]


@operation("GET", "/groups", NoParams, name="groups")
def groups_list(broker, params: NoParams) -> list[r.GroupSummary]:
    """Every group (classic and KIP-848 consumer groups): id, type, state, protocol type,
    generation (or group epoch) and member count."""
    out = []
    for group_id in broker.coordinator.group_ids():
        group = broker.coordinator.group(group_id)
        out.append({"group_id": group_id, "type": "classic", "state": group.state.value,
                    "protocol_type": group.protocol_type, "generation": group.generation,
                    "members": len(group.members)})
    listed = broker.query(c.ListGroups(request_id=broker.new_request_id()))
    for entry in listed.groups:
        if entry.group_type != "classic":
            out.append({"group_id": entry.group_id, "type": entry.group_type,
                        "state": entry.state, "protocol_type": entry.protocol_type,
                        "generation": None, "members": None})
    return out


@operation("GET", "/groups/{group_id}", GroupParams)
def group_view(broker, params: GroupParams) -> r.GroupView:
    """The full view of a group: state, generation, protocol, leader, members with decoded
    subscriptions and assignments, committed offsets with log-end offsets and lag. Consumer
    (KIP-848) groups add epochs, each member's target and pending revocation; share groups their
    share-partitions' start offsets."""
    return groups.group_view(broker, params.group_id)


@operation("POST", "/groups/{group_id}/expire-member", MemberParams)
def expire_member(broker, params: MemberParams) -> r.OperatorDone:
    """Expire a member now, exactly as its session timeout would (a rebalance follows)."""
    return groups.run_operator(broker, c.ExpireMember(
        request_id=broker.new_request_id(), group_id=params.group_id, member_id=params.member_id,
        group_instance_id=params.group_instance_id))


@operation("POST", "/groups/{group_id}/ignore-heartbeats", IgnoreHeartbeatsParams)
def ignore_heartbeats(broker, params: IgnoreHeartbeatsParams) -> r.OperatorDone:
    """Stop honouring a member's heartbeats (they are answered but no longer reset its session),
    so it expires when its session timeout runs out; ignore=false honours them again."""
    return groups.run_operator(broker, c.IgnoreHeartbeats(
        request_id=broker.new_request_id(), group_id=params.group_id, member_id=params.member_id,
        group_instance_id=params.group_instance_id, ignore=params.ignore))


@operation("POST", "/groups/{group_id}/rebalance", RebalanceParams)
def trigger_rebalance(broker, params: RebalanceParams) -> r.OperatorDone:
    """Start a rebalance of a group with members (a no-op if one is in progress)."""
    return groups.run_operator(broker, c.TriggerRebalance(
        request_id=broker.new_request_id(), group_id=params.group_id, reason=params.reason))


@operation("POST", "/groups/{group_id}/remove-static-member", RemoveStaticParams)
def remove_static_member(broker, params: RemoveStaticParams) -> r.OperatorDone:
    """Remove a static member by group.instance.id, as KIP-345's admin removal does (LeaveGroup
    naming only the instance id)."""
    return groups.remove_static_member(broker, params.group_id, params.group_instance_id, params.reason)


@operation("DELETE", "/groups/{group_id}", DeleteParams)
def delete_group(broker, params: DeleteParams) -> r.OperatorDone:
    """Delete a group and its offsets: an Empty one (as DeleteGroups), or with force any group,
    its members removed first."""
    return groups.run_operator(broker, c.DeleteGroup(
        request_id=broker.new_request_id(), group_id=params.group_id, force=params.force))


@operation("GET", "/groups/{group_id}/offsets", GroupParams)
def committed_offsets(broker, params: GroupParams) -> list[r.PartitionOffsets]:
    """Committed offsets with log-end offsets and lag, per partition committed or assigned (a
    share group: its share-partitions' start offsets and the lag from there)."""
    view = groups.group_view(broker, params.group_id)
    return view["offsets"]


@operation("POST", "/groups/{group_id}/offsets", SetOffsetsParams)
def set_offsets(broker, params: SetOffsetsParams) -> r.OffsetsSet:
    """Write committed offsets as an administrator would, in any group state (an unknown group is
    created Empty); returns the group's offsets afterwards."""
    offsets = groups.parse_offsets(params.offsets)
    for offset in offsets:  # a partition index is an int32 and an offset an int64 on the wire
        check_bounds("offsets: partition", offset.partition, 0, INT32_MAX)
        check_bounds("offsets: offset", offset.offset, 0, INT64_MAX)
    return groups.set_offsets(broker, params.group_id, offsets)
