"""Waiters: block until a condition holds, woken by new events and, between them, by a short
interval.

Each waiter checks its condition, then sleeps until the timeline sees an event newer than the
last one it checked after (``Timeline.wait_after``) or ``RECHECK_S`` has passed, whichever comes
first, and checks again. Events make a waiter prompt: nothing can slip between the check and
the sleep, as both run on the emulator's trio thread and the sequence number taken before the
check says which events were already accounted for. The interval is for what the emulator
cannot see: a predicate that calls a client's ``poll()`` drives that client (kafka-python
rejoins a group only inside ``poll()``), so with events alone it would sit out its timeout
whenever the emulator has nothing to record until the client acts.

Timeouts are wall time; on timeout ``WaitTimeout`` (HTTP 408) says what the waiter wanted and
what the emulator last saw (``last_seen``: the groups' states and the newest events).
"""

from __future__ import annotations

from typing import Any, Callable

import trio

from .groups import group_view
from .operations import ControlError
from .plane import control_of


MAX_TIMEOUT_S = 3600.0
# How often a condition is re-checked without an event: short against a test's patience, long
# against the cost of a predicate that polls a client (a few ms each time).
RECHECK_S = 0.1
LAST_EVENTS = 5  # how many of the newest events a timeout message shows
LAST_GROUPS = 10


class WaitTimeout(ControlError, TimeoutError):
    """A waiter gave up; nothing was changed."""

    def __init__(self, message: str) -> None:
        ControlError.__init__(self, message, 408)


def check_wait(timeout: float, interval: float = RECHECK_S) -> None:
    """ControlError unless ``timeout`` and ``interval`` are usable (NaN refused too)."""
    if not 0 <= timeout <= MAX_TIMEOUT_S:  # (NaN too)
        raise ControlError(f"timeout must be between 0 and {MAX_TIMEOUT_S} s, got {timeout}")
    if not 0 < interval <= 60:  # (NaN compares False: refused too)
        raise ControlError(f"interval must be above 0 and at most 60 s, got {interval}")


async def wait_until(broker: Any, check: Callable[[], Any], timeout: float,
                     describe: Callable[[], str]) -> Any:
    """The first truthy ``check()`` (run on the trio thread after each new event, and every
    ``RECHECK_S`` between events)."""
    check_wait(timeout)
    timeline = control_of(broker).timeline
    deadline = trio.current_time() + timeout
    start = timeline.seq
    while True:
        seq = timeline.seq
        result = check()
        if result:
            return result
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            raise WaitTimeout(f"timed out after {timeout:g} s: {describe()}; "
                              f"{last_seen(broker, start)}")
        await timeline.wait_after(seq, min(remaining, RECHECK_S))


async def wait_for_group(broker: Any, group_id: str, state: str | None = "Stable",
                         members: int | None = None, timeout: float = 30.0) -> dict:
    """The group view once the group is in ``state`` with ``members`` members (either may be
    None: any)."""
    if members is not None and members < 0:
        raise ControlError(f"members must be >= 0, got {members}")
    last: dict = {}

    def check():
        try:
            view = group_view(broker, group_id)
        except ControlError:
            last["view"] = None
            return None
        last["view"] = view
        if state is not None and view["state"].lower() != state.lower():
            return None
        if members is not None and len(view["members"]) != members:
            return None
        return view

    def describe() -> str:
        want = " with ".join(filter(None, [state and f"state {state}",
                                            members is not None and f"{members} member(s)"]))
        view = last.get("view")
        epoch = "generation" if view is None or view.get("type") == "classic" else "group epoch"
        seen = ("it does not exist" if view is None else
                f"it is {view['state']} with {len(view['members'])} member(s), {epoch} "
                f"{view['generation']}")
        return f"group {group_id!r} did not reach {want or 'existence'}; {seen}"

    return await wait_until(broker, check, timeout, describe)


# -- what a timeout says ------------------------------------------------------------------------

def last_seen(broker: Any, since: int | None = None) -> str:
    """What the emulator last saw, for a timeout message (read on the trio thread): how many
    events arrived since ``since``, every group's state (the first few) and the newest events."""
    from .. import coordinator as c  # (the coordinator package imports much; only on timeout)

    timeline = control_of(broker).timeline
    seq = timeline.seq
    parts = [f"the emulator last saw event #{seq}" + (
        f" ({seq - since} during the wait)" if since is not None else "")]
    listed = broker.query(c.ListGroups(request_id=broker.new_request_id())).groups
    if listed:
        shown = [f"{g.group_id!r} {g.state} ({g.group_type})" for g in listed[:LAST_GROUPS]]
        more = f" and {len(listed) - LAST_GROUPS} more" if len(listed) > LAST_GROUPS else ""
        parts.append(f"groups: {', '.join(shown)}{more}")
    else:
        parts.append("no groups")
    if timeline.max_events > 0:
        newest = timeline.select(limit=LAST_EVENTS)
        if newest:
            parts.append("newest events: " + "; ".join(map(brief, newest)))
    else:
        parts.append("the timeline keeps no events (emu.timeline.max.events=0)")
    return ", ".join(parts)


_SKIPPED = {"seq", "type", "at_ms", "connection_id", "correlation_id", "peer", "api_key",
            "client_software_name", "client_software_version", "latency_ms"}


def brief(event: dict) -> str:
    """One event dict in a few words: ``#12 RequestHandled JoinGroup v9 client_id='c'
    error_code=79``; long values are cut."""
    words = [f"#{event.get('seq')}", str(event.get("type"))]
    if event.get("type") == "RequestHandled":
        words.append(f"{event.get('api')} v{event.get('version')}")
    shown = 0
    for key, value in event.items():
        if key in _SKIPPED or key in ("api", "version") or value in (None, "", (), [], 0):
            continue
        if not isinstance(value, (str, int, float, bool)):
            continue
        text = repr(value)
        words.append(f"{key}={text[:40] + '...' if len(text) > 40 else text}")
        shown += 1
        if shown == 4:
            break
    return " ".join(words)
