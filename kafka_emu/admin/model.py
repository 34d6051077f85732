"""What the admin tools know, as plain values: group listings and descriptions, version rows.

Pure: no sockets. The client fills these from wire responses; ``format`` turns them into text.
Version choice is one rule everywhere (KIP-35): the highest version in the intersection of the
broker's advertised range and the range kafka-emu declares, or nothing if they do not meet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..protocol import APIS, DecodeError
from ..protocol.messages.consumer_protocol import decode_assignment
from ..protocol.versions import Versions

CONSUMER_PROTOCOL_TYPE = "consumer"

# Group states as brokers spell them (Kafka's ConsumerGroupState; the last two are KIP-848
# consumer groups). ``--state`` takes them in any case, as kafka-consumer-groups.sh does.
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling")
_BY_LOWER = {s.lower(): s for s in GROUP_STATES}


def canonical_state(name: str) -> str:
    """The broker spelling of a state name given in any case; ValueError if unknown."""
    try:
        return _BY_LOWER[name.strip().lower()]
    except KeyError:
        raise ValueError(f"invalid state {name!r}; valid states are: "
                         f"{', '.join(GROUP_STATES)}") from None


def usable_version(ours: Versions, theirs: Versions | None) -> int | None:
    """The version two sides would use: max of the intersection, None if there is none."""
    if theirs is None:
        return None
    both = ours.intersect(theirs)
    return None if both.empty else both.hi


@attrs.frozen(kw_only=True)
class ApiRow:
    """One line of ``kafka-emu versions``: an API either side knows."""

    key: int
    name: str | None  # None: the broker advertises an API kafka-emu does not declare
    broker: Versions | None  # None: not advertised by the broker
    ours: Versions | None
    usable: int | None


def api_rows(broker: Mapping[int, Versions], ours: Mapping = APIS) -> list[ApiRow]:
    rows = []
    for key in sorted(set(broker) | set(ours)):
        api = ours.get(key)
        mine = api.valid if api is not None else None
        theirs = broker.get(key)
        usable = usable_version(mine, theirs) if mine is not None else None
        rows.append(ApiRow(key=key, name=api.name if api is not None else None, broker=theirs,
                           ours=mine, usable=usable))
    return rows


@attrs.frozen(kw_only=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str | None = None  # None when the broker was not asked for states


@attrs.frozen(kw_only=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    # topic -> sorted partitions; None when the bytes are not a consumer-protocol assignment
    assignment: tuple[tuple[str, tuple[int, ...]], ...] | None
    raw_assignment: bytes = b""

    @property
    def partition_count(self) -> int | None:
        if self.assignment is None:
            return None
        return sum(len(parts) for _, parts in self.assignment)


@attrs.frozen(kw_only=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberDescription, ...] = ()
    error_code: int = 0
    error_message: str | None = None

    @property
    def exists(self) -> bool:
        # Before DescribeGroups v6 an unknown group is answered as Dead with no error.
        return self.error_code == 0 and self.state != "Dead"


def decode_member_assignment(protocol_type: str, data: bytes):
    """topic -> partitions of a consumer-protocol assignment, or None if it is not one."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not data:
        return None
    try:
        assignment = decode_assignment(data)
    except DecodeError:
        return None
    merged: dict[str, set[int]] = {}
    for tp in assignment.assigned_partitions:
        merged.setdefault(tp.topic, set()).update(tp.partitions)
    return tuple((topic, tuple(sorted(parts))) for topic, parts in sorted(merged.items()))


def filter_states(listings: Iterable[GroupListing], states: Iterable[str]) -> list[GroupListing]:
    """Client-side KIP-518 filter, for brokers whose ListGroups predates v4."""
    wanted = {s.lower() for s in states}
    return [g for g in listings if not wanted or (g.state or "").lower() in wanted]
