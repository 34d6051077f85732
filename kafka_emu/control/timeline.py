"""The timeline: a bounded in-memory record of everything the emulator did, and the waiters.

Theory of operation. ``Timeline.record`` is a sink on the one observer seam
(``broker.observation``), so it sees every server event (connections, requests, faults, time
moves) and every coordinator event, in emission order. Recording is one counter increment and
one ``deque.append`` of the event (its sequence number follows from its position; deferred
events come in batches, one ``extend`` each): events stay in the form they were emitted in --
frozen attrs objects, rows for the request path's RequestHandled, or records by reference: a
Heartbeat's RequestHandled and the coordinator's ReplyEmitted while the timeline is the only
sink (``broker/event_rows.py``, ``REQUEST_REFS``, ``REPLY_REFS``) -- and become rows and JSON-able
dicts (``event_dict``) only when somebody reads them, the same rows as ever; filters read a
row's fields by position without building the object. The deque keeps the
newest ``emu.timeline.max.events``; sequence numbers keep counting, so ``since=seq`` still means
"after that event" once older events have fallen off.

Filters name things that exist: an event type or an API that is no event or API of the emulator
is refused (ControlError 400 listing the known names) rather than answered with ``[]``, which
would read as "it never happened".

Waiters sleep in ``wait_after(seq, timeout)`` until an event newer than ``seq`` arrives (or the
timeout they pass, which ``control/waiters.py`` keeps short for conditions the emulator cannot
see), and re-check their condition then. With the timeline off
(``emu.timeline.max.events=0``) nothing is subscribed, so serving pays nothing; a waiter
``hold``s the timeline for as long as it waits, which subscribes it without storing.
"""

from __future__ import annotations

import collections
import enum
import itertools
from typing import Any, Callable

import attrs
import trio

from ..broker.events import RequestHandled
# every event class of the observer seam, by name (the table event_rows.py builds rows from)
from ..broker.event_rows import _event_classes, as_event, event_class, row_class, row_index, row_of
from ..coordinator.events import AssignmentsDistributed, MemberSubscribed
from ..protocol.errors import DecodeError
from ..protocol.messages.consumer_protocol import decode_assignment, decode_subscription
from .faults import api_key_of
from .operations import ControlError


def event_names() -> tuple[str, ...]:
    """Every event type the timeline can hold, sorted."""
    return tuple(sorted(_event_classes()))


def check_event_names(types: tuple[str, ...]) -> None:
    """ControlError (400) naming the unknown types and listing the known ones."""
    known = event_names()
    unknown = [t for t in types if t not in known]
    if unknown:
        raise ControlError(f"unknown event type(s) {', '.join(map(repr, unknown))} (known: "
                           f"{', '.join(known)})")


class Timeline:
    def __init__(self, observation: Any, max_events: int) -> None:
        self._observation = observation
        self.max_events = max_events
        self.events: collections.deque = collections.deque(maxlen=max(max_events, 1))
        self._append = self.events.append
        self._seq = 0  # the sequence number of the newest event seen
        self._wake: trio.Event | None = None
        self._holds = 0
        self._unsubscribe: Callable[[], None] | None = None
        if max_events > 0:
            self._subscribe()

    # -- recording --------------------------------------------------------------------------
    def _subscribe(self) -> None:
        if self._unsubscribe is None:
            if self.max_events > 0:
                self._unsubscribe = self._observation.subscribe(
                    self.record, rows=True, many=self.record_many, refs=True)
            else:
                self._unsubscribe = self._observation.subscribe(
                    self._count, rows=True, many=self._count_many, refs=True)

    @property
    def seq(self) -> int:
        """The sequence number of the newest event (deferred events delivered first)."""
        self._observation.drain()
        return self._seq

    def record(self, event: Any) -> None:
        self._seq += 1
        self._append(event)  # no (seq, event) tuple: an event's seq follows from its position
        self._woke()

    def record_many(self, events: list) -> None:
        self._seq += len(events)
        self.events.extend(events)
        self._woke()

    def _count(self, event: Any) -> None:  # the timeline is off, but somebody waits
        self._seq += 1
        self._woke()

    def _count_many(self, events: list) -> None:
        self._seq += len(events)
        self._woke()

    def _woke(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            wake.set()

    def hold(self) -> None:
        """Keep events counted (and waiters woken) even with the timeline off."""
        self._holds += 1
        self._subscribe()

    def release(self) -> None:
        self._holds -= 1
        if self._holds == 0 and self.max_events == 0 and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- waiting ----------------------------------------------------------------------------
    async def wait_after(self, seq: int, timeout: float) -> int:
        """Return the newest sequence number once it is past ``seq``, or after ``timeout``
        seconds (wall time) with whatever it is then."""
        self.hold()
        try:
            with trio.move_on_after(max(timeout, 0)):
                while self.seq <= seq:  # (reading seq delivers what is deferred)
                    if self._wake is None:
                        self._wake = trio.Event()
                    await self._wake.wait()
        finally:
            self.release()
        return self.seq

    # -- reading ----------------------------------------------------------------------------
    def _numbered(self):
        """(seq, event) for every kept event, oldest first."""
        first = self.seq - len(self.events) + 1  # reading seq delivers what is deferred
        # requests kept by reference become their rows here (observe.row_of)
        return zip(itertools.count(first), map(row_of, self.events))

    def select(self, *, since: int | None = None, group_id: str | None = None,
               types: tuple[str, ...] = (), limit: int | None = None) -> list[dict]:
        """Recorded events (oldest first) after ``since``, of ``group_id``, of these types (class
        names; an unknown name is a ControlError), at most the newest ``limit``."""
        check_event_names(types)
        wanted = set(types)
        out = []
        for seq, event in self._numbered():
            if since is not None and seq <= since:
                continue
            if group_id is not None and field_of(event, "group_id") != group_id:
                continue
            if wanted and event_class(event).__name__ not in wanted:
                continue
            out.append((seq, event))
        if limit is not None:
            out = out[-limit:] if limit > 0 else []
        return [event_dict(seq, event) for seq, event in out]

    def requests(self, *, since: int | None = None, api: str | None = None,
                 client_id: str | None = None, group_id: str | None = None,
                 limit: int | None = None) -> list[dict]:
        """Recorded RequestHandled events, filtered like ``select``; ``api`` is the API's name
        (case-insensitive) or key; one the emulator does not know is a ControlError listing
        those it does."""
        key = None if api is None else api_key_of(api.strip())
        out = []
        for seq, event in self._numbered():
            if event_class(event) is not RequestHandled:
                continue
            if since is not None and seq <= since:
                continue
            if key is not None and field_of(event, "api_key") != key:
                continue
            if client_id is not None and field_of(event, "client_id") != client_id:
                continue
            if group_id is not None and field_of(event, "group_id") != group_id:
                continue
            out.append((seq, event))
        if limit is not None:
            out = out[-limit:] if limit > 0 else []
        return [event_dict(seq, event) for seq, event in out]


# -- events as JSON-able values -------------------------------------------------------------

_ROW_INDEX: dict[tuple[type, str], int | None] = {}


def field_of(event: Any, name: str) -> Any:
    """Field ``name`` of an event in either form (None where its class has no such field)."""
    if type(event) is not tuple:
        return getattr(event, name, None)
    key = (event[0], name)
    index = _ROW_INDEX.get(key, -1)
    if index == -1:
        index = _ROW_INDEX[key] = row_index(row_class(event[0]), name)
    return None if index is None else event[index]


def event_dict(seq: int | None, event: Any) -> dict:
    """``{"seq": ..., "type": "MemberRemoved", field: value, ...}``: enums by value, error codes
    as integers, bytes hex -- except consumer-protocol subscriptions and assignments, which are
    decoded (``subscription`` / ``assignments``). ``event`` may be a row."""
    event = as_event(event)
    out: dict[str, Any] = {} if seq is None else {"seq": seq}
    out["type"] = type(event).__name__
    for field in attrs.fields(type(event)):
        out[field.name] = jsonable(getattr(event, field.name))
    if isinstance(event, MemberSubscribed) and event.protocol_type == "consumer":
        out["subscription"] = subscription_dict(event.metadata)
    elif isinstance(event, AssignmentsDistributed) and event.protocol_type == "consumer":
        out["decoded_assignments"] = {member: assignment_dict(data)
                                      for member, data in event.assignments}
    return out


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, enum.IntEnum):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if attrs.has(type(value)):
        return {f.name: jsonable(getattr(value, f.name)) for f in attrs.fields(type(value))}
    return str(value)


def subscription_dict(data: bytes) -> dict | None:
    """A consumer-protocol Subscription as {"topics", "owned_partitions", "generation_id",
    "rack_id", "user_data"}; None if the bytes are not one."""
    if not data:
        return None
    try:
        sub = decode_subscription(bytes(data))
    except DecodeError:
        return None
    return {
        "topics": list(sub.topics),
        "owned_partitions": {tp.topic: list(tp.partitions) for tp in (sub.owned_partitions or ())},
        "generation_id": sub.generation_id,
        "rack_id": sub.rack_id,
        "user_data": sub.user_data.hex() if sub.user_data else None,
    }


def assignment_dict(data: bytes) -> dict | None:
    """A consumer-protocol Assignment as {"partitions": {topic: [...]}, "user_data"}; None if
    the bytes are not one (or empty: no assignment yet)."""
    if not data:
        return None
    try:
        assignment = decode_assignment(bytes(data))
    except DecodeError:
        return None
    partitions: dict[str, list[int]] = {}
    for tp in assignment.assigned_partitions:
        partitions.setdefault(tp.topic, []).extend(tp.partitions)
    return {"partitions": partitions,
            "user_data": assignment.user_data.hex() if assignment.user_data else None}
