"""The control plane's state on one broker: the timeline (and whatever else a control room needs
to keep between operations), attached as ``broker.control``.

The broker never imports the control plane; whoever starts a broker for people to control (the
Python runners, ``kafka-emu serve``) calls ``control_of(broker)`` right after it starts, so the
timeline records from the first connection. Operations call it too, so a broker started some
other way still gets its control state on first use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..coordinator.events import (GenerationChanged, GroupDeleted, MemberRemoved, RebalanceTriggered,
                                  RemovalReason)
from .timeline import Timeline, event_dict


class ControlPlane:
    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.timeline = Timeline(broker.observation, broker.config.timeline_max_events)


def control_of(broker: Any) -> ControlPlane:
    """The broker's control state, attached on first use."""
    plane = broker.control
    if plane is None:
        plane = broker.control = ControlPlane(broker)
    return plane


@contextlib.contextmanager
def observing(broker: Any) -> Iterator[list]:
    """Collect every event emitted while the block runs (an operation reports what it caused)."""
    events: list = []
    unsubscribe = broker.observation.subscribe(events.append)
    try:
        yield events
    finally:
        unsubscribe()


_EXPIRY_REASONS = {RemovalReason.SESSION_EXPIRED, RemovalReason.NEW_MEMBER_TIMEOUT,
                   RemovalReason.PENDING_EXPIRED, RemovalReason.REBALANCE_TIMEOUT,
                   RemovalReason.SYNC_TIMEOUT}


def what_happened(events: list) -> dict:
    """The consequences an operation reports: members expired or removed, rebalances started,
    generations completed, groups deleted, and every event in order."""
    expired, removed, rebalances, generations, deleted = [], [], [], [], []
    for event in events:
        if isinstance(event, MemberRemoved):
            entry = {"group_id": event.group_id, "member_id": event.member_id,
                     "group_instance_id": event.group_instance_id, "reason": event.reason.value,
                     "at_ms": event.at_ms}
            (expired if event.reason in _EXPIRY_REASONS else removed).append(entry)
        elif isinstance(event, RebalanceTriggered):
            rebalances.append({"group_id": event.group_id, "reason": event.reason, "at_ms": event.at_ms})
        elif isinstance(event, GenerationChanged):
            generations.append({"group_id": event.group_id, "generation": event.generation,
                                "leader": event.leader, "members": list(event.members),
                                "at_ms": event.at_ms})
        elif isinstance(event, GroupDeleted):
            deleted.append({"group_id": event.group_id, "reason": event.reason, "at_ms": event.at_ms})
    return {"members_expired": expired, "members_removed": removed,
            "rebalances_started": rebalances, "generations": generations,
            "groups_deleted": deleted, "events": [event_dict(None, e) for e in events]}
