"""ListGroups, DescribeGroups, DeleteGroups and group removal (reference 3.14-3.16).

ListGroups v0-5: v4 StatesFilter (case-insensitive, trimmed), v5 TypesFilter (case-insensitive)
and GroupType; every group here is "classic". DescribeGroups v0-6: v6 reports unknown groups
with GROUP_ID_NOT_FOUND (``not_found_is_error``), earlier versions as a success-shaped "Dead"
entry. Outside Stable, members carry empty metadata but their last stored assignment, as the Java
coordinator reports them. DeleteGroups v0-2: only Empty groups can be deleted.
"""

from __future__ import annotations

from operator import attrgetter

from kafka_emu.errors import ErrorCode

from .commands import DeleteGroups, DescribeGroups, ListGroups
from .core import Core, heartbeat_key, join_key, sync_key
from .events import GroupDeleted, OffsetsRemoved, RemovalReason
from .group import Group
from .rebalance import drop_pending
from .results import (
    DeleteGroupsResult,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsResult,
    ListedGroup,
    ListGroupsResult,
)
from .state import GroupState

GROUP_TYPE = "classic"


def handle_list(core: Core, cmd: ListGroups) -> None:
    states = {s.lower().strip() for s in cmd.states_filter}
    types = {t.lower() for t in cmd.types_filter}
    listed = []
    for group in core.groups.values():
        if states and group.state.lower not in states:
            continue
        if types and GROUP_TYPE not in types:
            continue
        listed.append(
            ListedGroup(
                group_id=group.group_id,
                protocol_type=group.protocol_type or "",
                state=group.state.value,
                group_type=GROUP_TYPE,
            )
        )
    if core.consumer_groups:
        from .consumer import listed as consumer_listed

        listed.extend(consumer_listed(core, states, types))
    if core.share_groups:
        from .share.shared import listed as share_listed

        listed.extend(share_listed(core, states, types))
    core.reply(cmd.request_id, "ListGroups", None, ListGroupsResult(error=ErrorCode.NONE, groups=tuple(listed)))


# Everything ``describe_group`` reads of a member, in one C-level call per member.
_MEMBER_FACTS = attrgetter("member_id", "group_instance_id", "client_id", "client_host",
                           "metadata_by_name", "assignment")


def describe_group(core: Core, group_id: str, not_found_is_error: bool = True) -> DescribedGroup:
    """A group as DescribeGroups reports it. While nothing it reports has changed, the group's
    last description is handed out again -- the same object, so the broker can reuse what it
    encoded of it (a thousand-member group costs a thousand members to describe). "Nothing has
    changed" is checked, not tracked: the description is a function of the group's state,
    protocol type and name and of the facts ``_MEMBER_FACTS`` reads of each member in order,
    and those are compared with the ones it was made from. That costs a tuple per member, a
    fraction of building and encoding the member, and no change anywhere else can make it stale."""
    group = core.groups.get(group_id)
    if group is None:
        return DescribedGroup(
            error=ErrorCode.GROUP_ID_NOT_FOUND if not_found_is_error else ErrorCode.NONE,
            error_message=(f"Group {group_id} is not a classic group."
                           if group_id in core.consumer_groups or group_id in core.share_groups
                           else f"Group {group_id} not found.") if not_found_is_error else None,
            group_id=group_id,
            state=GroupState.DEAD.value,
        )
    made_of = (group.state, group.protocol_type, group.protocol_name,
               tuple(map(_MEMBER_FACTS, group.members.values())))
    last = group.described
    if last is not None and last[0] == made_of:
        return last[1]
    stable = group.state is GroupState.STABLE
    name = group.protocol_name if stable else None
    # One DescribedMember per member, in a list comprehension with Member.metadata(name)
    # written out: this runs a thousand times for a thousand-member group.
    described = DescribedMember
    if name is None:
        members = tuple([
            described(member_id=m.member_id, group_instance_id=m.group_instance_id,
                      client_id=m.client_id, client_host=m.client_host, metadata=b"",
                      assignment=m.assignment)
            for m in group.members.values()])
    else:
        members = tuple([
            described(member_id=m.member_id, group_instance_id=m.group_instance_id,
                      client_id=m.client_id, client_host=m.client_host,
                      metadata=m.metadata_by_name.get(name, b""), assignment=m.assignment)
            for m in group.members.values()])
    description = DescribedGroup(
        error=ErrorCode.NONE,
        group_id=group_id,
        state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=(group.protocol_name or "") if stable else "",
        members=members,
    )
    group.described = (made_of, description)
    return description


def handle_describe(core: Core, cmd: DescribeGroups) -> None:
    described = tuple(describe_group(core, gid, cmd.not_found_is_error) for gid in cmd.group_ids)
    core.reply(cmd.request_id, "DescribeGroups", None, DescribeGroupsResult(groups=described))


def handle_delete_groups(core: Core, cmd: DeleteGroups) -> None:
    results = []
    for gid in dict.fromkeys(cmd.group_ids):  # duplicates collapse, first-seen order (3.16)
        group = core.groups.get(gid)
        if group is None and gid in core.consumer_groups:
            from .consumer import delete_result

            results.append((gid, delete_result(core, gid)))
        elif group is None and gid in core.share_groups:
            from .share.shared import delete_result as share_delete_result

            results.append((gid, share_delete_result(core, gid)))
        elif group is None or group.state is GroupState.DEAD:
            results.append((gid, ErrorCode.GROUP_ID_NOT_FOUND))
        elif group.state is not GroupState.EMPTY:
            results.append((gid, ErrorCode.NON_EMPTY_GROUP))
        else:
            delete_group(core, group, "delete_groups")
            results.append((gid, ErrorCode.NONE))
    core.reply(cmd.request_id, "DeleteGroups", None, DeleteGroupsResult(results=tuple(results)))


def delete_group(core: Core, group: Group, reason: str) -> None:
    """Remove an Empty group with its offsets; pending member ids go with it."""
    gid = group.group_id
    for member_id in list(group.pending_members):
        drop_pending(core, group, member_id, RemovalReason.GROUP_DELETED)
    for member_id in group.members:  # Empty groups have none; kept for safety
        core.timers.cancel(heartbeat_key(gid, member_id))
    core.timers.cancel(join_key(gid))
    core.timers.cancel(sync_key(gid))
    group.transition_to(GroupState.DEAD)
    removed = core.offsets.delete_group(gid)
    del core.groups[gid]
    if core.observing:
        if removed:
            core.emit(OffsetsRemoved(at_ms=core.now, group_id=gid, partitions=tuple(removed), reason="group_deleted"))
        core.emit(GroupDeleted(at_ms=core.now, group_id=gid, reason=reason))
