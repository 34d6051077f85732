"""The group view of the modern protocol's groups: consumer (KIP-848) and share (KIP-932) groups.

``groups.group_view`` hands a group that is not classic here, so one view (``GroupView``) serves
every group type and ``wait_for_group`` works on all of them. The classic keys keep their
meaning where the modern protocol has one and a neutral value where it has none:

- ``generation`` is the group epoch (what a modern group has in place of a generation), also in
  ``group_epoch``; ``assignment_epoch`` is the epoch the target assignment was computed for;
- ``protocol_type`` is "consumer" or "share", ``protocol`` the server-side assignor's name (the
  members' choice, else the broker's default), ``leader`` None and ``pending_members`` empty: the
  coordinator assigns, no member leads;
- a member's ``subscription`` is built from its heartbeats: the topics it subscribes to (names
  and those its regex resolves to), its owned partitions (those it holds now), its member epoch
  as ``generation_id`` and its rack; ``assignment`` is what it holds now, ``target_assignment``
  what the coordinator wants it to hold, ``pending_revocation`` what it still has to give up,
  ``member_state`` Kafka's MemberState (stable, unrevoked_partitions, unreleased_partitions).

Offsets: a consumer group's committed offsets, log-end offsets and lag as for a classic group
(OffsetFetch as an administrator sends it). A share group commits nothing: each row carries its
share-partition's ``start_offset`` (the first offset not yet acknowledged or archived; None
until the first ShareFetch fixes it) and ``lag``, KIP-1226's as DescribeShareGroupOffsets v1
answers it: the records from there to the log end not yet acknowledged or archived.

Everything is read on the emulator's trio thread; nothing changes.
"""

from __future__ import annotations

from typing import Any

from .operations import ControlError


def _partitions(assignment: dict) -> dict[str, list[int]]:
    return {topic: sorted(ps) for topic, ps in sorted(assignment.items()) if ps}


def consumer_group_view(broker: Any, group_id: str, offsets_of) -> dict:
    """The view of a consumer (KIP-848) group; ``offsets_of(broker, group_id, owners)`` gives
    the offset rows (groups.committed_offsets)."""
    from ..coordinator.consumer import ConsumerGroupDescribe
    from ..coordinator.consumer.epochs import session_key

    group = broker.coordinator.consumer_group(group_id)
    if group is None or group.state.value == "Dead":
        raise ControlError(f"group {group_id!r} does not exist", 404)
    timers = broker.coordinator.timer_deadlines()
    config = broker.coordinator.config
    session_ms = group.session_timeout_ms or config.group_consumer_session_timeout_ms
    members = []
    for member in group.members.values():
        assigned = _partitions(member.assigned)
        topics = sorted(set(member.subscribed_topics) | set(member.subscribed_topic_names))
        members.append({
            "member_id": member.member_id,
            "group_instance_id": member.instance_id,
            "client_id": member.client_id,
            "client_host": member.client_host,
            "session_timeout_ms": (member.classic.session_timeout_ms if member.classic is not None
                                   else session_ms),
            "rebalance_timeout_ms": member.rebalance_timeout_ms,
            "is_leader": False,
            "awaiting_join": False,
            "awaiting_sync": False,
            "heartbeats_ignored": member.heartbeats_ignored,
            "session_deadline_ms": timers.get(session_key(group_id, member.member_id)),
            "subscription": {"topics": topics, "owned_partitions": assigned,
                             "generation_id": member.member_epoch, "rack_id": member.rack_id,
                             "user_data": None},
            "assignment": {"partitions": assigned, "user_data": None},
            "metadata": None,
            "raw_assignment": None,
            "member_epoch": member.member_epoch,
            "member_state": member.state.value,
            "target_assignment": _partitions(group.target.get(member.member_id, {})),
            "pending_revocation": _partitions(member.pending_revocation),
            "subscribed_topic_regex": member.subscribed_topic_regex,
            "uses_classic_protocol": member.classic is not None,
        })
    owners = {tp: owner[0] for tp, owner in group.owners.items()}
    offsets = offsets_of(broker, group_id, owners)
    described = broker.query(ConsumerGroupDescribe(request_id=broker.new_request_id(),
                                                   group_ids=(group_id,))).groups[0]
    return _view(group_id, "consumer", group.state.value, group.group_epoch,
                 group.assignment_epoch, described.assignor_name or None, members, offsets)


def share_group_view(broker: Any, group_id: str, log_end) -> dict:
    """The view of a share (KIP-932) group; ``log_end(broker, topic, partition)`` gives a
    partition's log-end offset (None: no such partition)."""
    from ..broker.share_fetching import lag_of
    from ..coordinator.share.commands import ShareGroupDescribe
    from ..coordinator.share.heartbeat import session_key

    described = broker.query(ShareGroupDescribe(request_id=broker.new_request_id(),
                                                group_ids=(group_id,))).groups[0]
    if described.error.value != 0 or described.state == "Dead":
        raise ControlError(f"group {group_id!r} does not exist", 404)
    timers = broker.coordinator.timer_deadlines()
    session_ms = broker.coordinator.config.share.session_timeout_ms  # (a group config may differ)
    members, owners = [], {}
    for m in described.members:
        assigned = {topic: list(ps) for topic, ps in m.assignment}
        for topic, ps in m.assignment:
            for p in ps:
                owners.setdefault((topic, p), m.member_id)  # a share-partition may have several
        members.append({
            "member_id": m.member_id, "group_instance_id": None, "client_id": m.client_id,
            "client_host": m.client_host, "session_timeout_ms": session_ms,
            "rebalance_timeout_ms": -1, "is_leader": False, "awaiting_join": False,
            "awaiting_sync": False, "heartbeats_ignored": False,
            "session_deadline_ms": timers.get(session_key(group_id, m.member_id)),
            "subscription": {"topics": sorted(m.subscribed_topic_names),
                             "owned_partitions": assigned, "generation_id": m.member_epoch,
                             "rack_id": m.rack_id, "user_data": None},
            "assignment": {"partitions": assigned, "user_data": None},
            "metadata": None, "raw_assignment": None,
            "member_epoch": m.member_epoch, "member_state": None,
            "target_assignment": None, "pending_revocation": None,
            "subscribed_topic_regex": None, "uses_classic_protocol": False,
        })
    shares: dict[tuple[str, int], Any] = {}
    share = broker.__dict__.get("share_fetching")
    for (_, topic_id, index), sp in (share.delivery.of_group(group_id).items()
                                     if share is not None else ()):
        info = broker.topics.lookup_id(topic_id)
        if info is not None and sp.initialised:
            shares[(info.name, index)] = sp
    offsets = []
    for topic, partition in sorted(set(shares) | set(owners)):
        sp = shares.get((topic, partition))
        end = log_end(broker, topic, partition)
        lag = None
        if sp is not None and end is not None:  # KIP-1226's, as DescribeShareGroupOffsets v1
            lag = lag_of(sp, broker.topics.partition(topic, partition))
        offsets.append({
            "topic": topic, "partition": partition, "committed_offset": None,
            "log_end_offset": end, "lag": lag,
            "metadata": None, "member_id": owners.get((topic, partition)),
            "start_offset": sp.start_offset if sp is not None else None,
        })
    return _view(group_id, "share", described.state, described.group_epoch,
                 described.assignment_epoch, described.assignor_name or None, members, offsets)


def _view(group_id: str, kind: str, state: str, group_epoch: int, assignment_epoch: int,
          assignor: str | None, members: list, offsets: list) -> dict:
    lags = [row["lag"] for row in offsets if row["lag"] is not None]
    return {
        "group_id": group_id, "state": state, "generation": group_epoch, "protocol_type": kind,
        "protocol": assignor, "leader": None, "members": members, "pending_members": [],
        "offsets": offsets, "total_lag": sum(lags), "type": kind,
        "group_epoch": group_epoch, "assignment_epoch": assignment_epoch,
    }
