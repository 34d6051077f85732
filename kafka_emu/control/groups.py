"""Group operations and the group view, on a live broker.

Changes go to the coordinator as its operator commands (``coordinator/operator.py``) through the
broker's one ``submit`` door, so parked requests they answer are routed and the timer task is
woken like after any request. A command that answers with an error changed nothing; that error
becomes a ``ControlError`` (404 for an unknown group or member, 409 when the group's state
forbids it, 400 for bad input).

The group view is what ``kafka-consumer-groups.sh --describe`` shows and a bit more: state,
generation, protocol, leader, members with their decoded consumer-protocol subscriptions and
assignments, and per partition the committed offset, the log-end offset and the lag. Consumer
(KIP-848) and share (KIP-932) groups get the same view with their epochs added
(modern_groups.py).
"""

from __future__ import annotations

from typing import Any

from .. import coordinator as c
from ..errors import ErrorCode
from . import modern_groups
from .operations import ControlError
from .plane import observing, what_happened
from .timeline import assignment_dict, subscription_dict

_STATUS = {
    ErrorCode.GROUP_ID_NOT_FOUND: 404,
    ErrorCode.UNKNOWN_MEMBER_ID: 404,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: 409,
    ErrorCode.NON_EMPTY_GROUP: 409,
    ErrorCode.INVALID_REQUEST: 400,
}


def run_operator(broker: Any, command: Any) -> dict:
    """Run an operator command; its member ids and what it caused, or ControlError."""
    with observing(broker) as events:
        pending = broker.submit(command, lambda result: result)
    result = pending.response
    if result.error != ErrorCode.NONE:
        raise ControlError(result.detail or result.error.name, _STATUS.get(result.error, 409))
    return {"member_ids": list(result.member_ids), "detail": result.detail, **what_happened(events)}


def existing_group(broker: Any, group_id: str):
    group = broker.coordinator.group(group_id)
    if group is None and broker.coordinator.has_group(group_id):
        if broker.coordinator.group_type(group_id) == "share":
            raise ControlError(f"group {group_id!r} is a share (KIP-932) group; this operation "
                               "acts on classic groups (ShareGroupDescribe shows it)", 409)
        raise ControlError(f"group {group_id!r} is a consumer (KIP-848) group; this operation "
                           "acts on classic groups (describe_consumer_group shows it)", 409)
    if group is None or group.state is c.GroupState.DEAD:
        cluster = broker.cluster
        if cluster.offsets_partition(group_id) in cluster.loading:
            # A moved coordinator unloads the group and reloads it after the load time: Kafka
            # answers COORDINATOR_LOAD_IN_PROGRESS meanwhile, and so does this view.
            raise ControlError(f"group {group_id!r} is loading on its new coordinator "
                               "(COORDINATOR_LOAD_IN_PROGRESS for emu.coordinator.load.time.ms); "
                               "retry, or wait_for_group", 409)
        raise ControlError(f"group {group_id!r} does not exist", 404)
    return group


def remove_static_member(broker: Any, group_id: str, group_instance_id: str, reason: str | None) -> dict:
    """KIP-345's admin removal: LeaveGroup naming only the instance id (as AdminClient's
    removeMembersFromConsumerGroup sends it)."""
    group = existing_group(broker, group_id)
    if group_instance_id not in group.static_members:
        raise ControlError(f"group {group_id!r} has no member with group.instance.id "
                           f"{group_instance_id!r}", 404)
    member_id = group.static_members[group_instance_id]
    command = c.LeaveGroup(request_id=broker.new_request_id(), group_id=group_id, members=(
        c.LeaveMember(member_id="", group_instance_id=group_instance_id, reason=reason),))
    with observing(broker) as events:
        pending = broker.submit(command, lambda result: result)
    errors = [m.error for m in pending.response.members if m.error != ErrorCode.NONE]
    if pending.response.error != ErrorCode.NONE or errors:  # checked above; kept honest
        raise ControlError(f"LeaveGroup answered {(errors or [pending.response.error])[0].name}", 409)
    return {"member_ids": [member_id], "detail": "", **what_happened(events)}


# -- offsets --------------------------------------------------------------------------------

def parse_offsets(raw: tuple) -> tuple[c.CommitOffset, ...]:
    """Offsets given as {"topic", "partition", "offset"[, "metadata"]} objects or as
    "topic:partition=offset" strings."""
    out = []
    for item in raw:
        if isinstance(item, str):
            where, sep, offset = item.rpartition("=")
            topic, sep2, partition = where.rpartition(":")
            if not sep or not sep2 or not topic:
                raise ControlError(f"offsets: expected topic:partition=offset, got {item!r}")
            item = {"topic": topic, "partition": partition, "offset": offset}
        if not isinstance(item, dict) or not {"topic", "partition", "offset"} <= set(item):
            raise ControlError(f"offsets: expected {{topic, partition, offset}}, got {item!r}")
        unknown = set(item) - {"topic", "partition", "offset", "metadata"}
        if unknown:
            raise ControlError(f"offsets: unknown field(s) {', '.join(sorted(unknown))}")
        try:
            partition, offset = int(item["partition"]), int(item["offset"])
        except (TypeError, ValueError):
            raise ControlError(f"offsets: partition and offset must be integers in {item!r}") from None
        if offset < 0:
            raise ControlError(f"offsets: offset must be >= 0, got {offset}")
        metadata = item.get("metadata", "")
        if not isinstance(metadata, str):
            raise ControlError(f"offsets: metadata must be a string in {item!r}")
        out.append(c.CommitOffset(topic=str(item["topic"]), partition=partition, offset=offset,
                                  metadata=metadata))
    return tuple(out)


def set_offsets(broker: Any, group_id: str, offsets: tuple[c.CommitOffset, ...]) -> dict:
    if not group_id:
        raise ControlError("group_id must not be empty")
    for o in offsets:
        if not broker.topics.exists(o.topic, o.partition):
            raise ControlError(f"no partition {o.topic}-{o.partition}", 404)
    run_operator(broker, c.SetOffsets(request_id=broker.new_request_id(), group_id=group_id,
                                      offsets=offsets))
    return {"group_id": group_id, "offsets": committed_offsets(broker, group_id)}


def _committed(broker: Any, group_id: str) -> dict[tuple[str, int], c.FetchedOffset]:
    fetched = broker.query(c.OffsetFetch(request_id=broker.new_request_id(), group_id=group_id,
                                         topics=None))
    return {(p.topic, p.partition): p for p in fetched.partitions}


def _log_end(broker: Any, topic: str, partition: int) -> int | None:
    found = broker.topics.catalogue.get(topic)
    if found is None or not 0 <= partition < len(found.partitions):
        return None
    return found.partition(partition).high_watermark


def committed_offsets(broker: Any, group_id: str, owners: dict | None = None) -> list[dict]:
    """Per partition committed or assigned: committed offset (None if none), log-end offset,
    lag (None without a commit), and the member it is assigned to (None if none)."""
    committed = _committed(broker, group_id)
    owners = owners or {}
    rows = []
    for topic, partition in sorted(set(committed) | set(owners)):
        fetched = committed.get((topic, partition))
        offset = fetched.offset if fetched is not None and fetched.offset >= 0 else None
        end = _log_end(broker, topic, partition)
        rows.append({
            "topic": topic, "partition": partition, "committed_offset": offset,
            "log_end_offset": end,
            "lag": None if offset is None or end is None else end - offset,  # as Kafka computes it
            "metadata": fetched.metadata if fetched is not None and offset is not None else None,
            "member_id": owners.get((topic, partition)),
            "start_offset": None,  # share groups only
        })
    return rows


# -- the view -------------------------------------------------------------------------------

def group_view(broker: Any, group_id: str) -> dict:
    kind = broker.coordinator.group_type(group_id)
    if kind == "consumer":
        return modern_groups.consumer_group_view(broker, group_id, committed_offsets)
    if kind == "share":
        return modern_groups.share_group_view(broker, group_id, _log_end)
    group = existing_group(broker, group_id)
    consumer = group.protocol_type == "consumer"
    owners: dict[tuple[str, int], str] = {}
    members = []
    timers = broker.coordinator.timer_deadlines()
    for member in group.members.values():
        # The chosen protocol's metadata; before the first generation, the member's first.
        metadata = member.metadata(group.protocol_name) if group.protocol_name else (
            member.protocols[0][1] if member.protocols else b"")
        assignment = assignment_dict(member.assignment) if consumer else None
        for topic, partitions in (assignment or {}).get("partitions", {}).items():
            for partition in partitions:
                owners[(topic, partition)] = member.member_id
        members.append({
            "member_id": member.member_id,
            "group_instance_id": member.group_instance_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "session_timeout_ms": member.session_timeout_ms,
            "rebalance_timeout_ms": member.rebalance_timeout_ms,
            "is_leader": group.leader_id == member.member_id,
            "awaiting_join": member.join_request is not None,
            "awaiting_sync": member.sync_request is not None,
            "heartbeats_ignored": member.heartbeats_ignored,
            "session_deadline_ms": timers.get(("heartbeat", group_id, member.member_id)),
            "subscription": subscription_dict(metadata) if consumer else None,
            "assignment": assignment,
            "metadata": None if consumer else metadata.hex(),
            "raw_assignment": None if consumer else member.assignment.hex(),
            # the modern protocol's (consumer and share groups; modern_groups.py)
            "member_epoch": None,
            "member_state": None,
            "target_assignment": None,
            "pending_revocation": None,
            "subscribed_topic_regex": None,
            "uses_classic_protocol": True,
        })
    offsets = committed_offsets(broker, group_id, owners)
    lags = [row["lag"] for row in offsets if row["lag"] is not None]
    return {
        "group_id": group_id,
        "state": group.state.value,
        "generation": group.generation,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol_name,
        "leader": group.leader_id if group.members else None,
        "members": members,
        "pending_members": list(group.pending_members),
        "offsets": offsets,
        "total_lag": sum(lags),
        "type": "classic",
        "group_epoch": None,
        "assignment_epoch": None,
    }
