"""Moving the coordinator's time: ``advance`` and ``advance_to_next_deadline``.

Theory of operation. The broker's clock (``broker/clock.py``, the one place that reads a clock)
carries an offset the control plane adds to; in manual mode it carries nothing else. Advancing
adds to the offset and then calls the coordinator's ``expire(now)``, which fires every timer that
fell due *at its own deadline*, earliest first (the coordinator sets its time to each timer's
deadline while that timer's work runs) -- so a jump of 45 s gives the same result as 45 s
passing: members that did not heartbeat within the span expire, the rebalances they cause start,
and a rebalance timeout that falls inside the span fires too. Replies for requests parked on the
groups (a surviving member's JoinGroup) go out at once, and the broker's timer task is woken
because the earliest deadline moved.

What happened is collected from the events emitted during the call (the one observer seam), so
the answer and the timeline tell the same story. ``TimeAdvanced`` comes first. The log retention
run is the broker's timer beside the coordinator's (``broker/log_retention.py``); the partitions
it trimmed are reported as ``logs_trimmed``.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..broker.events import TimeAdvanced
from ..coordinator import DEADLINE_KINDS, Deadline
from .operations import ControlError
from .plane import observing, what_happened


def advance(broker: Any, ms: int) -> dict:
    if ms < 0:
        raise ControlError(f"time only moves forward: ms must be >= 0, got {ms}")
    with observing(broker) as events:
        before = broker.now_ms()
        broker.clock.advance(ms)
        now = broker.now_ms()
        broker.observation.emit(TimeAdvanced(at_ms=now, by_ms=ms))
        trimmed = broker.fire_timers(now)
        broker.timers_changed.set()
    return {"from_ms": before, "now_ms": now, "advanced_ms": ms, **what_happened(events),
            "logs_trimmed": [attrs.asdict(t) for t in trimmed]}


# the broker's own timer beside the coordinator's: the next log retention run
LOG_RETENTION = "log_retention"
KINDS = (*DEADLINE_KINDS, LOG_RETENTION)


def deadlines(broker: Any, group_id: str | None = None, kind: str | None = None) -> list[Deadline]:
    """Pending coordinator timers, earliest first, of one group and/or one kind; the next log
    retention run as kind ``log_retention`` (only when asked for by kind)."""
    if kind is not None and kind not in KINDS:
        raise ControlError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    if group_id is not None and not broker.coordinator.has_group(group_id):
        raise ControlError(f"group {group_id!r} does not exist", 404)
    retention = Deadline(deadline_ms=broker.log_retention.next_check_ms, kind=LOG_RETENTION,
                         group_id=None, member_id=None)
    if kind == LOG_RETENTION:
        return [retention]
    found = [d for d in broker.coordinator.deadlines()
            if (kind is None or d.kind == kind)
            # the retention sweep belongs to no group; asked for by kind, it may delete this one
            and (group_id is None or d.group_id == group_id or kind == "retention")]
    return found  # the retention run only when asked for: it is no group's timer


def deadline_dict(deadline: Deadline, now_ms: int) -> dict:
    return {"deadline_ms": deadline.deadline_ms, "in_ms": deadline.deadline_ms - now_ms,
            "kind": deadline.kind, "group_id": deadline.group_id, "member_id": deadline.member_id}


def advance_to_next_deadline(broker: Any, group_id: str | None = None,
                             kind: str | None = None) -> dict:
    """Advance to the earliest pending timer (of that group and kind) and fire it -- with
    everything else due by then, as the passing time would."""
    found = deadlines(broker, group_id, kind)
    if not found:
        what = " ".join(filter(None, [kind and f"{kind}", "deadline",
                                      group_id and f"in group {group_id!r}"]))
        raise ControlError(f"no pending {what}", 404)
    target = found[0]
    now = broker.now_ms()
    result = advance(broker, max(target.deadline_ms - now, 0))
    result["deadline"] = deadline_dict(target, now)
    return result
