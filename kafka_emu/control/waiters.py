"""Waiters: block until the emulator reaches a condition, woken by new events, not by polling.

Each waiter checks its condition, then sleeps until the timeline sees an event newer than the
last one it checked after (``Timeline.wait_after``), and checks again. Nothing can slip between
the check and the sleep: both run on the emulator's trio thread, and the sequence number taken
before the check says which events were already accounted for. Timeouts are wall time; on
timeout ``WaitTimeout`` (HTTP 408) says what was last seen.
"""

from __future__ import annotations

from typing import Any, Callable

import trio

from .groups import group_view
from .operations import ControlError
from .plane import control_of


MAX_TIMEOUT_S = 3600.0


class WaitTimeout(ControlError, TimeoutError):
    """A waiter gave up; nothing was changed."""

    def __init__(self, message: str) -> None:
        ControlError.__init__(self, message, 408)


async def wait_until(broker: Any, check: Callable[[], Any], timeout: float,
                     describe: Callable[[], str]) -> Any:
    """The first truthy ``check()`` (run on the trio thread after each new event)."""
    if not 0 <= timeout <= MAX_TIMEOUT_S:  # also refuses NaN
        raise ControlError(f"timeout must be between 0 and {MAX_TIMEOUT_S} s, got {timeout}")
    timeline = control_of(broker).timeline
    deadline = trio.current_time() + timeout
    while True:
        seq = timeline.seq
        result = check()
        if result:
            return result
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            raise WaitTimeout(f"timed out after {timeout:g} s: {describe()}")
        await timeline.wait_after(seq, remaining)


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
        seen = ("it does not exist" if view is None else
                f"it is {view['state']} with {len(view['members'])} member(s), generation "
                f"{view['generation']}")
        return f"group {group_id!r} did not reach {want or 'existence'}; {seen}"

    return await wait_until(broker, check, timeout, describe)
