"""The one observer seam: every event the emulator emits reaches its sinks through here.

Theory of operation. The coordinator emits its events (``coordinator/events.py``) and the server
emits its own (``broker/events.py``: connections, requests, faults) through ONE callable,
``Observation.emit``. Sinks -- the control plane's timeline, the trace writer, the log lines, a
user's observer -- subscribe and unsubscribe at any time; ``emit`` is rebuilt on each change and
is ``None`` while nobody listens, so emitting code pays one attribute check and builds no event
when observation is off. The coordinator is told of every change (``Coordinator.set_observer``),
so its own ``observing`` flag stays in step.

A sink is called synchronously, in emission order, possibly in the middle of a coordinator
operation: it must not call back into the coordinator or block. A sink that raises is reported
(``on_error``) and the others still get the event: observation never breaks serving.

The helpers below read the facts a request event carries from any request and response
declaration (group, member, generation, per-partition errors) without a per-API table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..protocol.schema import Array, fields_of

Sink = Callable[[Any], None]


class Observation:
    def __init__(self, *, on_change: Callable[[Sink | None], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self._sinks: list[Sink] = []
        self._on_change = on_change
        self._on_error = on_error
        self.emit: Sink | None = None

    @property
    def sinks(self) -> tuple[Sink, ...]:
        return tuple(self._sinks)

    def subscribe(self, sink: Sink) -> Callable[[], None]:
        """Start delivering events to ``sink``; returns the function that stops it."""
        self._sinks.append(sink)
        self._rebuild()

        def unsubscribe() -> None:
            if sink in self._sinks:
                self._sinks.remove(sink)
                self._rebuild()
        return unsubscribe

    def _rebuild(self) -> None:
        sinks = tuple(self._sinks)
        on_error = self._on_error

        def emit(event: Any) -> None:
            for sink in sinks:
                try:
                    sink(event)
                except Exception as exc:  # a broken sink must not break serving
                    if on_error is not None:
                        on_error(exc)

        self.emit = emit if sinks else None
        if self._on_change is not None:
            self._on_change(self.emit)


# -- facts of a request, read from any declaration ------------------------------------------

_IDENTITY = ("group_id", "member_id", "group_instance_id", "generation_id")
_GENERATION_ALIAS = "generation_id_or_member_epoch"

# A reader per request class: which of the identity fields a class has is fixed by its
# declaration, so the lookups are resolved once and each request costs one generated function.
_IDENTITY_READERS: dict[type, Callable[[Any], tuple]] = {}


def request_identity(request: Any) -> tuple[str | None, str | None, str | None, int | None]:
    """(group_id, member_id, group_instance_id, generation) as the request states them.

    Field names are uniform across the group APIs' declarations; OffsetCommit v9+ calls the
    generation ``generation_id_or_member_epoch``. FindCoordinator names its group as ``key``.
    """
    reader = _IDENTITY_READERS.get(type(request))
    if reader is None:
        reader = _IDENTITY_READERS[type(request)] = _identity_reader(type(request))
    return reader(request)


def _identity_by_name(request: Any) -> tuple[str | None, str | None, str | None, int | None]:
    group, member, instance, generation = (getattr(request, name, None) for name in _IDENTITY)
    if generation is None:
        generation = getattr(request, _GENERATION_ALIAS, None)
    if group is None and getattr(request, "key_type", None) == 0:
        group = getattr(request, "key", None) or None
    return group, member, instance, generation


def _identity_reader(cls: type) -> Callable[[Any], tuple]:
    """``_identity_by_name`` resolved for one attrs class (the same answers, fewer lookups)."""
    if not attrs.has(cls):
        return _identity_by_name
    names = {a.name for a in attrs.fields(cls)}
    if "key_type" in names:  # FindCoordinator: the group depends on the request's key type
        return _identity_by_name
    if "generation_id" not in names and _GENERATION_ALIAS in names:
        generation = f"r.{_GENERATION_ALIAS}"
    else:
        generation = "r.generation_id" if "generation_id" in names else "None"
        if "generation_id" in names and _GENERATION_ALIAS in names:
            return _identity_by_name  # both: the alias stands in for a None generation_id
    parts = [f"r.{n}" if n in names else "None" for n in _IDENTITY[:3]] + [generation]
    namespace: dict[str, Any] = {}
    exec(f"def read(r): return ({', '.join(parts)})", namespace)  # noqa: S102 - field names
    return namespace["read"]


def _struct_arrays(cls: type) -> tuple[str, ...]:
    """Names of the fields of ``cls`` that are arrays of structs (cached per class)."""
    cached = cls.__dict__.get("__kafka_struct_arrays__")
    if cached is None:
        cached = tuple(f.name for f in fields_of(cls)
                       if isinstance(f.type, Array) and isinstance(f.type.element, type))
        setattr(cls, "__kafka_struct_arrays__", cached)
    return cached


def response_errors(response: Any) -> tuple[int | None, tuple[tuple[str, int, int], ...]]:
    """The response's top-level error code (None where it has none) and every non-zero
    per-partition error as (topic, partition, code), found by walking the declaration: a struct
    with an ``error_code`` and a ``partition_index``/``partition`` sits under a topic struct
    with a ``name``/``topic``."""
    top = getattr(response, "error_code", None)
    if not _struct_arrays(type(response)):
        return top, ()
    found: list[tuple[str, int, int]] = []
    _walk(response, None, found)
    return top, tuple(found)


def _walk(struct: Any, topic: str | None, found: list) -> None:
    for name in _struct_arrays(type(struct)):
        items = getattr(struct, name)
        if not items:
            continue
        for item in items:
            code = getattr(item, "error_code", 0)
            partition = getattr(item, "partition_index", None)
            if partition is None:
                partition = getattr(item, "partition", None)
            if partition is not None and isinstance(partition, int):
                if code:
                    found.append((topic or "", partition, code))
                continue
            item_topic = getattr(item, "name", None) or getattr(item, "topic", None)
            _walk(item, item_topic if isinstance(item_topic, str) else topic, found)


def request_partitions(request: Any, lookup_id: Callable[[Any], Any]) -> tuple[tuple[str, int], ...]:
    """Every (topic, partition) the request names, found by walking the declaration as
    ``response_errors`` does: a struct of ``partition_index``/``partition`` structs or an array
    of int partitions, under a topic struct with a ``name``/``topic`` or a ``topic_id`` (resolved
    with ``lookup_id``, Fetch v13+; an unknown id stays as its text)."""
    if not _struct_arrays(type(request)):
        return ()
    found: list[tuple[str, int]] = []
    _walk_request(request, None, lookup_id, found)
    return tuple(found)


def _walk_request(struct: Any, topic: str | None, lookup_id, found: list) -> None:
    for name in _struct_arrays(type(struct)):
        items = getattr(struct, name)
        if not items:
            continue
        for item in items:
            partition = getattr(item, "partition_index", None)
            if partition is None:
                partition = getattr(item, "partition", None)
            if isinstance(partition, int):
                found.append((topic or "", partition))
                continue
            item_topic = getattr(item, "name", None) or getattr(item, "topic", None)
            if not isinstance(item_topic, str) or not item_topic:
                topic_id = getattr(item, "topic_id", None)
                info = lookup_id(topic_id) if topic_id is not None else None
                item_topic = info.name if info is not None else (
                    str(topic_id) if topic_id is not None else topic)
            ints = getattr(item, "partitions", None)
            if ints and isinstance(ints[0], int) and name != "forgotten_topics_data":
                found.extend((item_topic or "", p) for p in ints)
                continue
            if name != "forgotten_topics_data":
                _walk_request(item, item_topic, lookup_id, found)
