"""Shared mutable state of one coordinator and the small utilities every handler uses.

``Core`` is internal: the public face is ``Coordinator``. Handlers (join, membership, admin,
offsets) and the rebalance engine are plain functions taking the core, so each API stays a small
module. ``core.now`` is the coordinator's current time: the command's ``now_ms`` while a command
runs, a timer's deadline while that timer's work runs.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Hashable

from ..frozen import mutable_twin
from .config import CoordinatorConfig
from .events import (REPLY_REFS, Event, GroupCreated, Observer, ReplyEmitted, RequestDropped,
                     RequestParked)
from .group import Group
from .offsets_store import OffsetStore
from .results import ITEMIZED, Reply, Result, summary_error
from .timers import Timers

RETENTION_KEY = ("retention",)
_ReplyTwin = mutable_twin(Reply)
_REPLY_EMITTED = ReplyEmitted.__name__  # a row names its event class (Coordinator.set_observer)


def heartbeat_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return ("heartbeat", group_id, member_id)


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


def default_member_uuid() -> str:
    return str(uuid.uuid4())


class Core:
    def __init__(
        self,
        config: CoordinatorConfig,
        observer: Observer | None,
        new_member_uuid: Callable[[], str] | None,
    ) -> None:
        self.config = config
        self.observer = observer
        self.observing = observer is not None
        self.observing_replies = self.observing  # (Coordinator.set_observer(replies=False))
        self.observer_rows = False  # Coordinator.set_observer(..., rows=True)
        self.reply_refs = False  # Coordinator.set_observer(..., reply_refs=True)
        # Coordinator.set_observer(..., frame_commits=): where a commit the request path records
        # by its frames notes its clock reading (OffsetCommit.by_frame), else None
        self.frame_commits: Any = None
        self.new_member_uuid = new_member_uuid or default_member_uuid
        self.groups: dict[str, Group] = {}
        self.consumer_groups: dict = {}  # group id -> consumer.ConsumerGroup (KIP-848)
        self.share_groups: dict = {}  # group id -> share.ShareGroup (KIP-932)
        # (group id, member id or None for the whole group, at_ms) of share members fenced or left
        # and share groups deleted, kept once Coordinator.track_share_departures() asks, for the
        # share-partitions to release what those members hold
        self.share_departures: list | None = None
        self.timers = Timers()
        self.offsets = OffsetStore()
        self.now = 0
        self.out: list[Reply] = []

    # ---------------------------------------------------------------- output
    def emit(self, event: Event) -> None:
        """Call only under ``if core.observing`` so no event is built without an observer."""
        self.observer(event)  # type: ignore[misc]

    def reply(self, request_id: Hashable, api: str, group_id: str | None, result: Result) -> None:
        # Reply(request_id, result) built in its mutable twin (frozen.mutable_twin): every
        # group request makes one, and the class call costs about twice the two stores
        reply = _ReplyTwin()
        reply.request_id, reply.result = request_id, result
        reply.__class__ = Reply
        self.out.append(reply)
        if self.observing_replies:
            if self.reply_refs:  # the result itself: the observer reads it only if asked
                self.observer((REPLY_REFS, self.now, group_id, request_id, api, result))  # type: ignore[misc]
                return
            if self.observer_rows:  # the same event as a row: one per request, so made cheap
                # int(summary_error(result)) without the calls for the usual answer: no error
                error = getattr(result, "error", None)
                if error:
                    code = int(error)
                elif type(result) in ITEMIZED:
                    code = int(summary_error(result))
                else:
                    code = 0
                self.observer((_REPLY_EMITTED, self.now, group_id, request_id, api, code))  # type: ignore[misc]
                return
            self.emit(
                ReplyEmitted(
                    at_ms=self.now,
                    group_id=group_id,
                    request_id=request_id,
                    api=api,
                    error=summary_error(result),
                )
            )

    def parked(self, group_id: str, request_id: Hashable, api: str) -> None:
        if self.observing:
            self.emit(RequestParked(at_ms=self.now, group_id=group_id, request_id=request_id, api=api))

    def dropped(self, group_id: str, request_id: Hashable | None, api: str, reason: str) -> None:
        if request_id is not None and self.observing:
            self.emit(
                RequestDropped(at_ms=self.now, group_id=group_id, request_id=request_id, api=api, reason=reason)
            )

    # ---------------------------------------------------------------- groups
    def create_group(self, group_id: str) -> Group:
        group = Group(group_id, self)
        self.groups[group_id] = group
        if self.observing:
            self.emit(GroupCreated(at_ms=self.now, group_id=group_id))
        if RETENTION_KEY not in self.timers:
            # The retention sweep runs every offsets.retention.check.interval.ms while any group
            # exists (4.3); with no groups there is nothing to sweep and no timer to wake for.
            self.timers.schedule(RETENTION_KEY, self.now + self.config.offsets_retention_check_interval_ms)
        return group

    # ---------------------------------------------------------------- timers
    def schedule_heartbeat(self, group: Group, member_id: str, timeout_ms: int) -> None:
        # heartbeat_key(...) written out: every heartbeat and commit passes here
        self.timers.schedule(("heartbeat", group.group_id, member_id), self.now + timeout_ms)

    def cancel_heartbeat(self, group: Group, member_id: str) -> None:
        self.timers.cancel(heartbeat_key(group.group_id, member_id))
