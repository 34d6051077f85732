"""The public coordinator: one door for commands, one for time.

``handle(command, now_ms)`` first fires every timer whose deadline is *strictly before* now_ms
(they would have fired at an earlier instant), then runs the command. Timers due exactly at
now_ms fire in ``expire(now_ms)``, after requests that arrive at the same instant; a broker loop
calls ``expire(now)`` whenever ``next_deadline() <= now``. Timer work runs with the coordinator's
time set to the timer's own deadline, so ``expire`` after a long jump gives the same result as
expiring at every deadline along the way.

Both return the replies produced, in the order they were produced: the command's own answer
(unless it was parked) and answers to requests parked earlier. The coordinator's time never runs
backwards: a ``now_ms`` earlier than the latest one seen is treated as that latest one.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from kafka_emu.errors import ErrorCode, KafkaError

from . import admin, consumer, join, membership, offsets, operator, txn_offsets
from .share import commands as share_commands, heartbeat as share_heartbeat, shared as share_shared
from .commands import (
    Command,
    DeleteGroup,
    DeleteGroups,
    DescribeGroups,
    ExpireMember,
    Heartbeat,
    IgnoreHeartbeats,
    JoinGroup,
    LeaveGroup,
    ListGroups,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    SetOffsets,
    SyncGroup,
    TriggerRebalance,
)
from .config import CoordinatorConfig
from .core import Core, heartbeat_key, join_key, sync_key
from .events import Observer
from .group import Group
from .rebalance import JOIN, SYNC, on_heartbeat_expired, on_join_timer, on_sync_expired
from .results import (
    DeleteGroupsResult,
    DescribedGroup,
    DescribeGroupsResult,
    HeartbeatResult,
    JoinGroupResult,
    LeaveGroupResult,
    ListGroupsResult,
    OffsetCommitResult,
    OffsetDeleteResult,
    OffsetFetchResult,
    OperatorResult,
    PartitionError,
    Reply,
    Result,
    SyncGroupResult,
)
from .state import GroupState

_HANDLERS: dict[type, tuple[str, Callable]] = {
    JoinGroup: ("JoinGroup", join.handle_join),
    SyncGroup: ("SyncGroup", membership.handle_sync),
    Heartbeat: ("Heartbeat", membership.handle_heartbeat),
    LeaveGroup: ("LeaveGroup", membership.handle_leave),
    OffsetCommit: ("OffsetCommit", offsets.handle_commit),
    OffsetFetch: ("OffsetFetch", offsets.handle_fetch),
    OffsetDelete: ("OffsetDelete", offsets.handle_offset_delete),
    ListGroups: ("ListGroups", admin.handle_list),
    DescribeGroups: ("DescribeGroups", admin.handle_describe),
    DeleteGroups: ("DeleteGroups", admin.handle_delete_groups),
    consumer.ConsumerGroupHeartbeat: ("ConsumerGroupHeartbeat", consumer.handle_heartbeat),
    consumer.ConsumerGroupDescribe: ("ConsumerGroupDescribe", consumer.handle_describe),
    share_commands.ShareGroupHeartbeat: ("ShareGroupHeartbeat", share_heartbeat.handle_heartbeat),
    share_commands.ShareGroupDescribe: ("ShareGroupDescribe", share_shared.handle_describe),
    ExpireMember: (operator.API, operator.handle_expire_member),
    IgnoreHeartbeats: (operator.API, operator.handle_ignore_heartbeats),
    TriggerRebalance: (operator.API, operator.handle_trigger_rebalance),
    DeleteGroup: (operator.API, operator.handle_delete_group),
    SetOffsets: (operator.API, operator.handle_set_offsets),
    txn_offsets.TxnOffsetCommit: (txn_offsets.API, txn_offsets.handle_txn_commit),
    txn_offsets.CompleteTxnOffsets: (txn_offsets.COMPLETE, txn_offsets.handle_complete),
}


class Coordinator:
    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        *,
        observer: Observer | None = None,
        new_member_uuid: Callable[[], str] | None = None,
    ) -> None:
        self._core = Core(config or CoordinatorConfig(), observer, new_member_uuid)
        # True if no timer falls due before ``at_ms``; cheaper than ``next_deadline`` (nothing
        # settled), and False only says to ask it. The timers' own method, bound once (the
        # core keeps one Timers for its life): the broker asks after every request, and a
        # method of ours that called it cost a Python call each time.
        self.none_due_before: Callable[[int], bool] = self._core.timers.none_before

    @property
    def config(self) -> CoordinatorConfig:
        return self._core.config

    def set_observer(self, observer: Observer | None, *, rows: bool = False,
                     replies: bool = True, reply_refs: bool = False,
                     frame_commits: Any = None) -> None:
        """Replace the observer (None: observation off, no event is built). With ``rows`` the
        observer also takes the events emitted once per request (``ReplyEmitted``) as rows:
        ``("ReplyEmitted", at_ms, group_id, request_id, api, error)``, the fields in declaration
        order with the error as a plain int, which is cheaper than building the frozen object
        (the broker's observer seam takes rows; see broker/event_rows.py). With ``replies=False``
        the observer does not want ReplyEmitted: none is built (every other event is). With
        ``reply_refs`` it takes them by reference: ``(events.REPLY_REFS, at_ms, group_id,
        request_id, api, result)``, the error left for the reader to work out. With
        ``frame_commits`` (the broker's observation, while the trace alone listens, by frames) a
        one-partition commit the request path records by its frames (``OffsetCommit.by_frame``)
        makes no OffsetsCommitted row: its clock reading goes to ``frame_commits.commit_at``, and
        the request path records the commit with the request (broker/event_rows.py's
        COMMIT_FRAME)."""
        self._core.observer = observer
        self._core.observing = observer is not None
        self._core.observing_replies = observer is not None and replies
        self._core.observer_rows = rows
        self._core.reply_refs = reply_refs
        self._core.frame_commits = frame_commits if observer is not None else None

    def swap_observer(self, observer: Observer) -> None:
        """Replace the observer's callable only: the same observer, the same forms (the broker's
        seam swaps its emitting callable for each batch a connection serves)."""
        self._core.observer = observer

    # ------------------------------------------------------------------ doors
    def handle(self, command: Command, now_ms: int) -> list[Reply]:
        # _start, _dispatch and _finish, written out: this runs for every request
        core = self._core
        core.out = []
        if now_ms < core.now:
            now_ms = core.now
        # whether a timer may be due before now_ms (_fire_due says which), read off the timers'
        # heap: a Python call less on every request
        heap = core.timers.heap
        if heap and heap[0][0] < now_ms:
            self._fire_due(now_ms - 1)
        core.now = now_ms
        entry = _HANDLERS.get(type(command))
        if entry is None or core.consumer_groups or core.share_groups:
            self._dispatch(command)
        else:
            try:
                entry[1](core, command)
            except KafkaError as exc:
                core.reply(command.request_id, entry[0], getattr(command, "group_id", None),
                           error_result(command, exc.code))
        out = core.out
        core.out = []
        return out

    def query(self, command: Command, now_ms: int) -> list[Reply]:
        """``handle`` for a read-only command from outside the wire (a test or the control plane
        looking): timers due before now_ms fire, observed as ever, but the look itself emits no
        event -- it is not something that happened in the group, and a waiter that looks after
        every event must not wake itself."""
        if type(command) not in _READ_ONLY:
            raise TypeError(f"not a read-only coordinator command: {command!r}")
        core = self._core
        self._start(now_ms)
        observing, core.observing = core.observing, False
        replies, core.observing_replies = core.observing_replies, False
        try:
            self._dispatch(command)
        finally:
            core.observing, core.observing_replies = observing, replies
        return self._finish()

    def _dispatch(self, command: Command) -> None:
        entry = _HANDLERS.get(type(command))
        if entry is None:
            raise TypeError(f"not a coordinator command: {command!r}")
        api, handler = entry
        core = self._core
        if core.consumer_groups and getattr(command, "group_id", None) in core.consumer_groups:
            # classic-group APIs aimed at a consumer group (offsets, classic members)
            handler = consumer.SHARED_HANDLERS.get(type(command), handler)
        elif core.share_groups and getattr(command, "group_id", None) in core.share_groups:
            # other group types' APIs aimed at a share group (share/shared.py)
            handler = share_shared.OTHER_TYPE_HANDLERS.get(type(command), handler)
        try:
            handler(core, command)
        except KafkaError as exc:
            core.reply(command.request_id, api, getattr(command, "group_id", None), error_result(command, exc.code))

    def next_deadline(self) -> int | None:
        return self._core.timers.next_deadline()

    def expire(self, now_ms: int) -> list[Reply]:
        self._start(now_ms, fire_due_at_now=True)
        return self._finish()

    def mark_dead(self, group_id: str, now_ms: int) -> list[Reply]:
        """Simulate the unload of the group's partition: parked JoinGroups (PreparingRebalance)
        or SyncGroups (CompletingRebalance/Stable) get NOT_COORDINATOR, timers stop, and the group
        stays in Dead (3.11, 3.12), where member requests get COORDINATOR_NOT_AVAILABLE. A
        consumer (KIP-848) group keeps its state, as its records hold it, and its timers stop
        (``consumer/loading.py``)."""
        core = self._core
        self._start(now_ms)
        consumer_group = core.consumer_groups.get(group_id)
        if consumer_group is not None:
            consumer.loading.unload(core, consumer_group)
        share_group = core.share_groups.get(group_id)
        if share_group is not None:
            share_heartbeat.unload(core, share_group)
        group = core.groups.get(group_id)
        if group is not None and group.state is not GroupState.DEAD:
            group.transition_to(GroupState.DEAD)
            previous = group.previous_state
            for member in group.members.values():
                if previous is GroupState.PREPARING_REBALANCE:
                    request = group.take_join(member)
                    if request is not None:
                        core.reply(
                            request,
                            JOIN,
                            group_id,
                            JoinGroupResult(error=ErrorCode.NOT_COORDINATOR, member_id=member.member_id),
                        )
                elif member.sync_request is not None:
                    request, member.sync_request = member.sync_request, None
                    core.reply(request, SYNC, group_id, SyncGroupResult(error=ErrorCode.NOT_COORDINATOR))
                core.timers.cancel(heartbeat_key(group_id, member.member_id))
            for member_id in group.pending_members:
                core.timers.cancel(heartbeat_key(group_id, member_id))
            core.timers.cancel(join_key(group_id))
            core.timers.cancel(sync_key(group_id))
        return self._finish()

    def load_group(self, group_id: str, now_ms: int) -> list[Reply]:
        """Reload an unloaded (Dead) group as a new coordinator reads it from
        ``__consumer_offsets`` (reference 3.1): from what was last stored, Stable with those
        members, generation and assignments (Empty if none), every member's session timer
        restarted (onGroupLoaded). A group never stored comes back Empty if it has committed
        offsets, else not at all. Live groups are left alone; nothing is parked on a loaded
        group, so no reply comes back. An unloaded consumer (KIP-848) group is served again with
        its members' epochs, its session and revocation timers restarted."""
        core = self._core
        self._start(now_ms)
        consumer_group = core.consumer_groups.get(group_id)
        if consumer_group is not None:
            consumer.loading.load(core, consumer_group)
        share_group = core.share_groups.get(group_id)
        if share_group is not None:
            share_heartbeat.load(core, share_group)
        group = core.groups.get(group_id)
        if group is not None and group.state is GroupState.DEAD:
            del core.groups[group_id]
            stored = group.stored
            if stored is not None or core.offsets.has_group(group_id):
                loaded = core.create_group(group_id)
                if stored is not None:
                    loaded.load(stored)
                    for member in loaded.members.values():
                        core.schedule_heartbeat(loaded, member.member_id,
                                                member.session_timeout_ms)
        return self._finish()

    def partitions_deleted(self, partitions, now_ms: int) -> list[Reply]:
        """Topics were deleted: drop every group's committed offsets for these (topic, partition)
        pairs. Nothing is parked on offsets, so no reply comes back; observers see
        OffsetsRemoved(reason="partitions_deleted")."""
        core = self._core
        self._start(now_ms)
        offsets.on_partitions_deleted(core, set(partitions))
        return self._finish()

    # ---------------------------------------------------------------- queries
    def describe(self, group_id: str) -> DescribedGroup:
        return admin.describe_group(self._core, group_id)

    def group_ids(self) -> list[str]:
        return list(self._core.groups)

    def all_group_ids(self) -> list[str]:
        """Classic, consumer (KIP-848) and share (KIP-932) groups."""
        core = self._core
        return [*core.groups, *core.consumer_groups, *core.share_groups]

    def group(self, group_id: str) -> Group | None:
        """The live entity, for tests and read-only inspection. Do not mutate it."""
        return self._core.groups.get(group_id)

    def consumer_group(self, group_id: str):
        """The live consumer (KIP-848) group entity, or None; read-only, like ``group``."""
        return self._core.consumer_groups.get(group_id)

    def own_ids(self, group_id: str, member_id: str | None, client_id: str | None
                ) -> tuple[str, str | None, str | None]:
        """The group's and the member's own strings equal to ``group_id``, ``member_id`` and
        ``client_id`` (the member's client id), each the given one where there is no such
        group or member or they differ: a caller keeping them a while (a parked request's
        RequestHandled facts) shares them instead of keeping copies."""
        group = self._core.groups.get(group_id)
        if group is None:
            return group_id, member_id, client_id
        member = group.members.get(member_id) if member_id is not None else None
        if member is None:
            return group.group_id, member_id, client_id
        return (group.group_id, member.member_id,
                member.client_id if member.client_id == client_id else client_id)

    def has_group(self, group_id: str) -> bool:
        """A classic, consumer (KIP-848) or share (KIP-932) group of that id exists."""
        core = self._core
        return group_id in core.groups or group_id in core.consumer_groups or group_id in core.share_groups

    # Share groups (KIP-932): read-only queries for the share-partition side (ShareFetch)
    def share_assignment(self, group_id: str, member_id: str) -> dict[str, frozenset[int]] | None:
        """topic -> partitions the share group member holds now; None: no such share member."""
        return share_shared.assignment_of(self._core, group_id, member_id)

    def share_member_epoch(self, group_id: str, member_id: str) -> int | None:
        return share_shared.member_epoch_of(self._core, group_id, member_id)

    def share_group_state(self, group_id: str) -> str | None:
        """"Empty" or "Stable"; None when no share group has that id."""
        return share_shared.state_of(self._core, group_id)

    def track_share_departures(self) -> None:
        """From now on keep every share member fenced or left and every share group deleted
        until ``take_share_departures`` hands them out (the share-partitions release their
        records)."""
        if self._core.share_departures is None:
            self._core.share_departures = []

    def take_share_departures(self) -> list[tuple[str, str | None, int]]:
        """(group id, member id -- None: the group was deleted --, at_ms) since the last call."""
        core = self._core
        taken = core.share_departures or []
        if core.share_departures is not None:
            core.share_departures = []
        return taken

    def group_type(self, group_id: str) -> str | None:
        """"classic", "consumer", "share", or None when no group has that id."""
        return share_shared.group_type_of(self._core, group_id)

    def timer_deadlines(self) -> dict[object, int]:
        return dict(self._core.timers.items())

    def deadlines(self) -> list[Deadline]:
        """Every pending timer as (deadline, kind, group, member), earliest first.

        Kinds: "session" (a member's session timeout), "new_member" (the join timeout of a member
        added in this rebalance, 3.7), "pending_member" (a MEMBER_ID_REQUIRED id that has not come
        back, 3.5), "rebalance" (the join phase's rebalance timeout), "initial_delay"
        (group.initial.rebalance.delay.ms, 3.6), "pending_sync" (members that have not sent
        SyncGroup, 3.7) and "retention" (the offset retention sweep; no group).
        """
        core = self._core
        found = []
        for key, deadline, payload in core.timers.entries():
            kind, group_id, member_id = _timer_kind(core, key, payload)
            found.append(Deadline(deadline_ms=deadline, kind=kind, group_id=group_id, member_id=member_id))
        found.sort(key=lambda d: d.deadline_ms)
        return found

    # --------------------------------------------------------------- plumbing
    def _start(self, now_ms: int, *, fire_due_at_now: bool = False) -> None:
        """Begin a call at now_ms: fire the timers due before it (or at it, for expire), then
        move the coordinator's time there. Time never runs backwards: a caller that expired at
        a deadline may read its clock a millisecond short of it afterwards."""
        core = self._core
        core.out = []
        if now_ms < core.now:
            now_ms = core.now
        self._fire_due(now_ms if fire_due_at_now else now_ms - 1)
        core.now = now_ms

    def _finish(self) -> list[Reply]:
        core = self._core
        out, core.out = core.out, []
        return out

    def _fire_due(self, limit: int) -> None:
        core = self._core
        timers = core.timers
        while True:
            item = timers.pop_due(limit)
            if item is None:
                return
            key, deadline, payload = item
            if deadline > core.now:
                core.now = deadline
            kind = key[0]
            if kind == "heartbeat":
                on_heartbeat_expired(core, key[1], key[2])
            elif kind == "join":
                on_join_timer(core, key[1], payload)
            elif kind == "sync":
                on_sync_expired(core, key[1], payload)
            elif kind in consumer.TIMER_KINDS:
                consumer.on_timer(core, key, payload)
            elif kind in share_heartbeat.TIMER_KINDS:
                share_heartbeat.on_timer(core, key, payload)
            else:
                offsets.on_retention_timer(core, admin.delete_group)
                consumer.on_retention(core)


_READ_ONLY = (ListGroups, DescribeGroups, OffsetFetch, consumer.ConsumerGroupDescribe,
              share_commands.ShareGroupDescribe)

DEADLINE_KINDS = ("session", "new_member", "pending_member", "rebalance", "initial_delay", "pending_sync",
                  "retention")


@attrs.frozen(kw_only=True)
class Deadline:
    deadline_ms: int
    kind: str  # one of DEADLINE_KINDS
    group_id: str | None
    member_id: str | None = None


def _timer_kind(core: Core, key: tuple, payload) -> tuple[str, str | None, str | None]:
    kind = key[0]
    if kind == "heartbeat":
        group = core.groups.get(key[1])
        member = group.members.get(key[2]) if group is not None else None
        if member is None:
            return "pending_member", key[1], key[2]
        return ("new_member" if member.is_new else "session"), key[1], key[2]
    if kind == "join":
        return ("initial_delay" if payload[0] == "initial" else "rebalance"), key[1], None
    if kind == "sync":
        return "pending_sync", key[1], None
    if kind == consumer.heartbeat.SESSION:  # KIP-848 groups: a member's session
        return "session", key[1], key[2]
    if kind == consumer.heartbeat.REBALANCE:  # KIP-848: a member's revocation deadline
        return "rebalance", key[1], key[2]
    if kind == share_heartbeat.SESSION:  # KIP-932: a share group member's session
        return "session", key[1], key[2]
    if kind == consumer.heartbeat.CLASSIC_JOIN:  # a classic member in a consumer group
        return "rebalance", key[1], key[2]
    if kind == consumer.heartbeat.CLASSIC_SYNC:
        return "pending_sync", key[1], key[2]
    return "retention", None, None


def error_result(command: Command, code: ErrorCode) -> Result:
    """The error-shaped result of a command failed as a whole (also usable by the broker)."""
    if isinstance(command, JoinGroup):
        return JoinGroupResult(error=code, member_id=command.member_id)
    if isinstance(command, SyncGroup):
        return SyncGroupResult(error=code)
    if isinstance(command, Heartbeat):
        return HeartbeatResult(error=code)
    if isinstance(command, LeaveGroup):
        return LeaveGroupResult(error=code)
    if isinstance(command, OffsetCommit):
        return OffsetCommitResult(
            partitions=tuple(PartitionError(topic=o.topic, partition=o.partition, error=code) for o in command.offsets)
        )
    if isinstance(command, txn_offsets.TxnOffsetCommit):
        return OffsetCommitResult(
            partitions=tuple(PartitionError(topic=o.topic, partition=o.partition, error=code) for o in command.offsets)
        )
    if isinstance(command, OffsetFetch):
        return OffsetFetchResult(error=code)
    if isinstance(command, OffsetDelete):
        return OffsetDeleteResult(error=code)
    if isinstance(command, ListGroups):
        return ListGroupsResult(error=code)
    if isinstance(command, DescribeGroups):
        return DescribeGroupsResult(
            groups=tuple(DescribedGroup(error=code, group_id=gid, state="") for gid in command.group_ids)
        )
    if isinstance(command, consumer.ConsumerGroupHeartbeat):
        return consumer.ConsumerGroupHeartbeatResult(error=code)
    if isinstance(command, consumer.ConsumerGroupDescribe):
        return consumer.ConsumerGroupDescribeResult(groups=tuple(
            consumer.DescribedConsumerGroup(error=code, group_id=gid) for gid in command.group_ids))
    if isinstance(command, share_commands.ShareGroupHeartbeat):
        return share_commands.ShareGroupHeartbeatResult(error=code)
    if isinstance(command, share_commands.ShareGroupDescribe):
        return share_commands.ShareGroupDescribeResult(groups=tuple(
            share_commands.DescribedShareGroup(error=code, group_id=gid) for gid in command.group_ids))
    if isinstance(command, DeleteGroups):
        return DeleteGroupsResult(results=tuple((gid, code) for gid in dict.fromkeys(command.group_ids)))
    if isinstance(command, (ExpireMember, IgnoreHeartbeats, TriggerRebalance, DeleteGroup, SetOffsets)):
        return OperatorResult(error=code)
    raise TypeError(f"not a coordinator command: {command!r}")
