"""Time: advance the coordinator's clock, jump to the next deadline, read the clock and timers."""

from __future__ import annotations

from typing import Literal

import attrs

from .. import results as r
from .. import timing
from ..timing import KINDS
from ..operations import ControlError, NoParams, bounded, operation

Kind = Literal[KINDS]  # type: ignore[valid-type]

# One call moves the clock at most ten years (a test of a week-long retention fits many times
# over), and the clock never passes the last millisecond of the year 9999: record timestamps and
# log lines become dates, and Python's datetime (logs, the report) ends with that year.
MAX_ADVANCE_MS = 10 * 365 * 24 * 3600 * 1000
MAX_CLOCK_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


@attrs.frozen(kw_only=True)
class AdvanceParams:
    ms: int = bounded(0, MAX_ADVANCE_MS, doc=(
        "milliseconds to move forward: at most ten years per call, and never past the end of "
        "the year 9999"))


@attrs.frozen(kw_only=True)
class NextDeadlineParams:
    group_id: str | None = None
    kind: Kind | None = None  # session, new_member, pending_member, rebalance, initial_delay, pending_sync, retention, log_retention


@operation("POST", "/time/advance", AdvanceParams)
def advance(broker, params: AdvanceParams) -> r.Advanced:
    """Move the coordinator's time forward by ms, firing every timer that falls due, in deadline
    order, as if the time had passed; returns what happened (members expired, rebalances started,
    groups deleted, every event)."""
    now = broker.now_ms()
    if now + params.ms > MAX_CLOCK_MS:
        raise ControlError(f"ms: the clock ({now}) would pass the end of the year 9999 "
                           f"({MAX_CLOCK_MS}); at most {MAX_CLOCK_MS - now} ms are left, got "
                           f"{params.ms}")
    return timing.advance(broker, params.ms)


@operation("POST", "/time/advance-to-next-deadline", NextDeadlineParams)
def advance_to_next_deadline(broker, params: NextDeadlineParams) -> r.AdvancedToDeadline:
    """Move time to the earliest pending timer (optionally of one group and one kind) and fire it;
    returns what happened, and the deadline it moved to."""
    return timing.advance_to_next_deadline(broker, params.group_id, params.kind)


@operation("GET", "/time/deadlines", NextDeadlineParams)
def deadlines(broker, params: NextDeadlineParams) -> list[r.Deadline]:
    """Pending coordinator timers, earliest first: deadline, ms from now, kind, group, member."""
    now = broker.now_ms()
    return [timing.deadline_dict(d, now) for d in timing.deadlines(broker, params.group_id, params.kind)]


@operation("GET", "/time", NoParams)
def clock(broker, params: NoParams) -> r.Clock:
    """The coordinator's clock: now (ms since the epoch), its mode (real or manual) and how far
    the control plane has moved it."""
    return {"now_ms": broker.now_ms(), "mode": "manual" if broker.clock.manual else "real",
            "advanced_ms": broker.clock.advanced_ms}
