"""The timeline (every request and coordinator event, with a sequence number) and waiters."""

from __future__ import annotations

from typing import Literal

import attrs

from ...coordinator import GroupState
from ...coordinator.consumer.model import ConsumerGroupState
from .. import results as r
from .. import waiters
from ..plane import control_of
from ..operations import INT32_MAX, INT64_MAX, bounded, operation

# a classic group's states, then those only a consumer (KIP-848) group has (a share group's
# Empty and Stable are among the first)
State = Literal[tuple(dict.fromkeys(  # type: ignore[valid-type]
    [s.value for s in GroupState] + [s.value for s in ConsumerGroupState]))]


@attrs.frozen(kw_only=True)
class TimelineParams:
    group_id: str | None = None
    # only events after this sequence number
    since: int | None = bounded(0, INT64_MAX, default=None)
    # event class names, e.g. MemberRemoved, RequestHandled (an unknown name is refused, with
    # the known ones)
    types: tuple[str, ...] = ()
    limit: int | None = bounded(0, INT32_MAX, default=None)  # at most the newest N


@attrs.frozen(kw_only=True)
class RequestsParams:
    api: str | None = None  # name (case-insensitive) or key, e.g. Heartbeat or 12
    client_id: str | None = None
    group_id: str | None = None
    since: int | None = bounded(0, INT64_MAX, default=None)
    limit: int | None = bounded(0, INT32_MAX, default=None)


@attrs.frozen(kw_only=True)
class WaitGroupParams:
    group_id: str
    state: State | None = "Stable"
    members: int | None = bounded(0, INT32_MAX, default=None)
    timeout: float = bounded(0.0, waiters.MAX_TIMEOUT_S, default=30.0,
                             doc="seconds of wall time")


@operation("GET", "/timeline", TimelineParams)
def timeline(broker, params: TimelineParams) -> list[r.Event]:
    """Recorded events, oldest first, each with its sequence number ("seq") and type; filter by
    group, by sequence number (since) and by type."""
    return control_of(broker).timeline.select(since=params.since, group_id=params.group_id,
                                              types=params.types, limit=params.limit)


@operation("GET", "/timeline/requests", RequestsParams)
def requests(broker, params: RequestsParams) -> list[r.Event]:
    """Recorded requests (api, version, client id and software, peer, group, member, generation,
    latency, error codes), oldest first; filter by api, client id, group and since."""
    return control_of(broker).timeline.requests(since=params.since, api=params.api,
                                                client_id=params.client_id,
                                                group_id=params.group_id, limit=params.limit)


@operation("GET", "/groups/{group_id}/wait", WaitGroupParams)
async def wait_for_group(broker, params: WaitGroupParams) -> r.GroupView:
    """Wait (woken by events, not polling) until the group (classic, consumer or share) is in a
    state with a number of members; returns the group view, or 408 after timeout seconds."""
    return await waiters.wait_for_group(broker, params.group_id, params.state, params.members,
                                        params.timeout)
