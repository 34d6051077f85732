"""Rows: the cheap encodings of the events that travel through the observer seam (observe.py).

Events travel in one of two forms of the same content. An event object (the frozen attrs
classes) is what a sink gets by default. The request path, which emits an event for every
request, emits the event's *row* instead: a plain tuple ``("EventClass", value, ...)``, the
class's name and its attrs fields in declaration order (enums by value), which costs a tenth
of building the frozen object. A sink that subscribes with ``rows=True`` (the timeline, the
trace writer, the log lines) receives rows as they are and turns them into objects, dicts or
JSON only when it needs to (``as_event``, ``event_class``); every other sink receives objects,
the row converted once per event whoever else listens. Rows are an encoding, not a second path:
they are emitted through the same ``emit`` to the same sinks in the same order, and
``as_event(row)`` equals the object the request path would have built.

Cheaper still, where a request and its response hold only scalars (Heartbeat, InitProducerId),
the request path records RequestHandled by reference (``REQUEST_REFS``: the frozen request and
response, the clock reading and the values read when it was handled) for sinks that take such
records (``refs=True``: the timeline), which make the row only when somebody reads it
(``row_of``); so does the coordinator with its ReplyEmitted (``REPLY_REFS``: the reply's
result, its error worked out when read). For a sink that must ship its events out of the process
(``frames=True``: the trace writer), the same requests are recorded by their frames
(``REQUEST_FRAME``: the request's frame and the response's, both bytes already made), which
marshal carries at a third of a row's cost, and the row is made from them by decoding them
(``row_of``, in the trace's encoder process). While any other sink listens, rows are made as
before. While the trace alone listens, a one-partition commit's OffsetsCommitted goes with
the commit's record by frames too (``COMMIT_FRAME``): the coordinator makes no row for it. A
sink that never keeps the coordinator's ReplyEmitted (the trace writer) says so
(``replies=False``): while no sink wants them the coordinator builds none; while one does, every
sink gets them.

The helpers below read the facts a request event carries from any request and response
declaration (group, member, generation, per-partition errors) without a per-API table;
``request_facts`` compiles them, per pair of request and response classes, into one function.
"""

from __future__ import annotations

import enum
import sys
import typing
from collections.abc import Callable
from typing import Any

import attrs

from ..protocol.schema import RECORDS, Array, fields_of

# the walks over a declaration (request_facts compiles calls to them)
from .request_walk import (_struct_arrays, compiled_errors, compiled_partitions,
                           request_partitions, response_errors)


def _event_classes() -> dict[str, type]:
    from ..coordinator import events as coordinator_events
    from ..coordinator.consumer import events as consumer_events
    from . import events as server_events
    found: dict[str, type] = {}
    for module in (server_events, coordinator_events, consumer_events):
        for value in vars(module).values():
            if isinstance(value, type) and attrs.has(value) and value.__module__ == module.__name__:
                found[value.__name__] = value
    return found


_CLASSES: dict[str, type] = {}
_BUILDERS: dict[str, Callable[[tuple], Any]] = {}


def row_class(tag: str) -> type:
    """The event class a row names."""
    cls = _CLASSES.get(tag)
    if cls is None:
        _CLASSES.update(_event_classes())
        _CLASSES[REQUEST_REFS] = _CLASSES[_REQUEST_HANDLED]
        _CLASSES[REPLY_REFS] = _CLASSES["ReplyEmitted"]
        _CLASSES[REQUEST_FRAME] = _CLASSES[_REQUEST_HANDLED]
        _CLASSES[COMMIT_FRAME] = _CLASSES[_OFFSETS_COMMITTED]
        cls = _CLASSES[tag]
    return cls


# -- RequestHandled by reference --------------------------------------------------------------
#
# Where a request and its response hold nothing but scalars (Heartbeat, InitProducerId: no
# arrays of structs, so nothing to walk, no topic id to resolve, and small), the request path
# records the request by reference, ``(REQUEST_REFS, request, response, started, done, at,
# connection_id, peer, api, api_key, version, correlation_id, client_id, client_software_name,
# client_software_version)`` -- the frozen request and response objects and the values that
# could change later, read when the request was handled; ``at`` is at_ms, or the clock's
# ``ms_later`` (broker/clock.py) that tells it from ``done`` -- and the RequestHandled row is made
# from it only when somebody reads it (``row_of``): the same row, by the same compiled function,
# as the request path would have made. Only sinks that say so (``subscribe(refs=True)``: the
# timeline) get such records; while any other listens, the request path makes rows.
REQUEST_REFS = "RequestHandled/refs"
# the coordinator's ReplyEmitted by reference (coordinator/events.py's tag, interned there and
# here, so that ``is`` matches it without the server importing the events before it observes)
REPLY_REFS = sys.intern("ReplyEmitted/refs")
# request classes recorded by reference (filled as ``request_row_maker`` meets them)
BY_REFERENCE: set[type] = set()
# request classes recorded by their frames -> the newest version that may be: those, and those
# whose arrays the row reads from the frames as well as from the objects (``_by_frame``:
# OffsetCommit below v10, which names topics by id, ...)
BY_FRAME: dict[type, int] = {}
# RequestHandled by its frames, for sinks that take them (``subscribe(frames=True)``), where the
# request path would record by reference and no fault rule acted on the request: ``(REQUEST_FRAME,
# frame, response_frame, started, done, at, (connection_id, peer, client_software_name,
# client_software_version))`` -- the request's frame as read (api key, version, correlation id,
# client id and the request), the size-prefixed response frame as written, and the values that are
# in neither: the clock readings that give latency_ms and, with ``at`` (at_ms, or the clock's
# ``ms_constants``: ``clock.ms_from``), at_ms, and the connection's identity, one tuple shared by
# its records (ConnectionInfo.trace_identity). ``row_of`` decodes both with the codec that made the
# request and the response, and makes the row with the same compiled function: the request is the
# one decoded, and such a response (scalars only, built by a handler) holds nothing its version
# does not carry but what the row does not read.
REQUEST_FRAME = sys.intern("RequestHandled/frame")
# A one-partition commit's OffsetsCommitted by the record of its request's frames, while the trace
# alone listens (Coordinator.set_observer's ``frame_commits``): ``(COMMIT_FRAME, record, at_ms)``,
# ``record`` the commit's ``REQUEST_FRAME`` record (emitted next, the same tuple) and ``at_ms``
# the coordinator's clock reading when it committed. Everything else the row holds is in the
# request: ``committed_row`` makes it from the request, ``frame_rows.commit_row`` from the
# frame. A commit's row cost the request path about as much as its record; this costs a tuple.
COMMIT_FRAME = sys.intern("OffsetsCommitted/frame")
_OFFSETS_COMMITTED = "OffsetsCommitted"  # the tag of its rows (the class's name)


def committed_row(request: Any, at_ms: int) -> tuple:
    """The OffsetsCommitted row of a one-partition OffsetCommit request (v2-9: topics by name)
    the coordinator committed at ``at_ms``: the row it makes of the command the handler builds
    from the request (handlers/offset_commit.py)."""
    topic = request.topics[0]
    partition = topic.partitions[0]
    return (_OFFSETS_COMMITTED, at_ms, request.group_id, request.member_id,
            request.generation_id_or_member_epoch,
            ((topic.name, partition.partition_index, partition.committed_offset),))


def row_of(event: Any) -> Any:
    """``event`` with a by-reference record made into its row (else as it is)."""
    if type(event) is not tuple:
        return event
    if event[0] is not REQUEST_REFS:
        if event[0] is REPLY_REFS:  # the coordinator's (coordinator/events.py): the error by value
            from ..coordinator.results import summary_error
            return ("ReplyEmitted", *event[1:5], int(summary_error(event[5])))
        if event[0] == REQUEST_FRAME:  # (==: a record through marshal holds an equal string)
            from .frame_rows import frame_row
            return frame_row(event)
        if event[0] == COMMIT_FRAME:
            from .frame_rows import commit_row
            return commit_row(event)
        return event
    (_, q, r, started, done, at, connection, peer, api, key, version, correlation, client,
     software, software_version) = event
    make = request_row_maker(type(q), type(r))
    return make(q, r, (done - started) * 1000 if started is not None else 0.0, None,
                at if type(at) is int else at(done),
                connection, peer, api, key, version, correlation, client, software,
                software_version)


def _by_reference(request_cls: type, response_cls: type) -> bool:
    return (attrs.has(request_cls) and attrs.has(response_cls)
            and not _struct_arrays(request_cls) and not _struct_arrays(response_cls))


def _by_frame(request_cls: type, response_cls: type, version: int | None = None) -> bool:
    """Whether the row can be made from the two frames, decoded, in another process: the row's
    partitions and per-partition errors are read from the arrays of both by the same walk, so
    arrays are fine, unless the request names topics by id (``request_partitions`` asks the
    server's topics for their names) or either carries records (Produce, Fetch: their frames
    are large, and a Fetch answer is written in parts). A field the row reads that a version
    does not carry would be lost: tests/trace/test_trace_frames_arrays.py decodes every
    (API, version) so recorded against the row the request path makes."""
    limit = _frame_limit(request_cls, response_cls)
    return limit >= 0 if version is None else version <= limit


_ANY_VERSION = 1 << 15


def _frame_limit(request_cls: type, response_cls: type) -> int:
    """The newest version ``_by_frame`` holds for (-1: none): topic ids arrived in a later
    version of some requests (OffsetCommit and OffsetFetch v10, Produce v13)."""
    if not (attrs.has(request_cls) and attrs.has(response_cls)):
        return -1
    if _by_reference(request_cls, response_cls):
        return _ANY_VERSION
    if _holds_records(request_cls) or _holds_records(response_cls):
        return -1
    ids_from = _first_version_of(request_cls, "topic_id")
    return _ANY_VERSION if ids_from is None else ids_from - 1


def _first_version_of(cls: type, name: str) -> int | None:
    """The lowest version in which a field of ``cls`` or of a struct in it is named ``name``."""
    found = []
    for spec in fields_of(cls):
        if spec.name == name:
            found.append(spec.versions.lo)
        elif isinstance(spec.type, Array) and isinstance(spec.type.element, type):
            inner = _first_version_of(spec.type.element, name)
            if inner is not None:
                found.append(max(inner, spec.versions.lo))
    return min(found, default=None)


def _no_topic_id(topic_id: Any) -> Any:
    raise LookupError(f"topic id {topic_id} in a request recorded by its frames (_by_frame)")


# what a row made from frames is given to resolve topic ids with: none to resolve (``_by_frame``)
NO_TOPIC_IDS = type("NoTopicIds", (), {"lookup_id": staticmethod(_no_topic_id)})()


def _names(cls: type, names: tuple[str, ...]) -> bool:
    """Whether a field of ``cls`` or of a struct in it is named one of ``names``."""
    return any(spec.name in names or (isinstance(spec.type, Array)
                                      and isinstance(spec.type.element, type)
                                      and _names(spec.type.element, names))
               for spec in fields_of(cls))


def _holds_records(cls: type) -> bool:
    return any(spec.type is RECORDS or (isinstance(spec.type, Array)
                                        and isinstance(spec.type.element, type)
                                        and _holds_records(spec.type.element))
               for spec in fields_of(cls))


def _builder(tag: str) -> Callable[[tuple], Any]:
    cls = row_class(tag)
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    namespace: dict[str, Any] = {"cls": cls}
    args = []
    for i, a in enumerate(attrs.fields(cls)):
        enum_type = _enum_of(hints.get(a.name))
        if enum_type is None:
            args.append(f"{a.name}=r[{i + 1}]")
        else:  # the row holds the enum's value
            namespace[f"E{i}"] = enum_type
            args.append(f"{a.name}=None if r[{i + 1}] is None else E{i}(r[{i + 1}])")
    exec(f"def build(r): return cls({', '.join(args)})", namespace)  # noqa: S102 - field names
    build = namespace["build"]
    _BUILDERS[tag] = build
    return build


def _enum_of(annotation: Any) -> type | None:
    """The enum class an annotation names (``E`` or ``E | None``), else None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            return candidate
    return None


def as_event(event: Any) -> Any:
    """The event object of an event in either form."""
    if type(event) is not tuple:
        return event
    if (event[0] is REQUEST_REFS or event[0] is REPLY_REFS or event[0] == REQUEST_FRAME
            or event[0] == COMMIT_FRAME):
        event = row_of(event)
    build = _BUILDERS.get(event[0])
    if build is None:
        build = _builder(event[0])
    return build(event)


def event_class(event: Any) -> type:
    """The event's class, whichever form it travels in."""
    return row_class(event[0]) if type(event) is tuple else type(event)


def event_row(event: Any) -> tuple:
    """The row of an event in either form."""
    if type(event) is tuple:
        return row_of(event)
    make = _ROW_MAKERS.get(type(event))
    if make is None:
        make = _row_maker(type(event))
    return make(event)


# event class -> its row maker: a function compiled per class, reading each field by name (a
# coordinator event reaching a row sink, such as every commit's OffsetsCommitted for the trace,
# costs one call, not a walk over ``attrs.fields`` with a call per field)
_ROW_MAKERS: dict[type, Callable[[Any], tuple]] = {}


def _row_maker(cls: type) -> Callable[[Any], tuple]:
    _CLASSES.setdefault(cls.__name__, cls)
    # each field as _plain gives it (an enum by its value), written out
    fields = "".join(f"v.value if isinstance(v := e.{a.name}, Enum) else v, "
                     for a in attrs.fields(cls))
    namespace: dict[str, Any] = {"Enum": enum.Enum}
    exec(f"def row(e): return ({cls.__name__!r}, {fields})", namespace)  # noqa: S102 - names
    make = _ROW_MAKERS[cls] = namespace["row"]
    return make


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def row_index(cls: type, name: str) -> int | None:
    """Where field ``name`` of ``cls`` sits in its rows (None: the class has no such field)."""
    for i, a in enumerate(attrs.fields(cls)):
        if a.name == name:
            return i + 1
    return None


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
    parts = _identity_parts(cls, "r")
    if parts is None:
        return _identity_by_name
    namespace: dict[str, Any] = {}
    exec(f"def read(r): return ({parts})", namespace)  # noqa: S102 - field names
    return namespace["read"]


def _identity_parts(cls: type, var: str) -> str | None:
    """The four identity values of a ``cls`` instance named ``var`` as Python source, or None
    where they depend on the instance (then ``_identity_by_name`` reads them)."""
    if not attrs.has(cls):
        return None
    names = {a.name for a in attrs.fields(cls)}
    if "key_type" in names:  # FindCoordinator: the group depends on the request's key type
        return None
    if "generation_id" not in names and _GENERATION_ALIAS in names:
        generation = f"{var}.{_GENERATION_ALIAS}"
    else:
        generation = f"{var}.generation_id" if "generation_id" in names else "None"
        if "generation_id" in names and _GENERATION_ALIAS in names:
            return None  # both: the alias stands in for a None generation_id
    parts = [f"{var}.{n}" if n in names else "None" for n in _IDENTITY[:3]] + [generation]
    return ", ".join(parts)


# (request class, response class) -> the function behind ``request_facts``
_FACTS: dict[tuple[type, type], Callable[..., tuple]] = {}
_REQUEST_HANDLED = "RequestHandled"  # the tag of its rows (the class's name)


def request_facts(request: Any, response: Any, latency_ms: float,
                  lookup_id: Callable[[Any], Any]) -> tuple:
    """The fields of ``RequestHandled`` from ``group_id`` on, in declaration order: (group_id,
    member_id, group_instance_id, generation_id, latency_ms, error_code, partition_errors,
    throttle_time_ms, partitions, session_timeout_ms, rebalance_timeout_ms) -- what
    ``request_identity``, ``response_errors`` and ``request_partitions`` say, read by one
    function compiled for the pair of classes (``response`` is None for an unanswered request)."""
    key = (type(request), type(response))
    facts = _FACTS.get(key)
    if facts is None:
        facts = _FACTS[key] = _facts_reader(*key)
    return facts(request, response, latency_ms, lookup_id)


# request class -> response class -> the function that makes a whole RequestHandled row (two
# lookups by class: no key tuple to build and hash per request)
REQUEST_ROWS: dict[type, dict[type, Callable[..., tuple]]] = {}


def request_row_maker(request_cls: type, response_cls: type) -> Callable[..., tuple]:
    """``make(q, r, latency_ms, topics, at_ms, connection_id, peer, api, api_key, version,
    correlation_id, client_id, client_software_name, client_software_version)``: the
    RequestHandled row -- those fields, then what ``request_facts`` reads -- in one tuple
    (cached in ``REQUEST_ROWS``; the request path calls it directly). ``topics`` is asked
    ``topics.lookup_id(topic_id)`` for requests that name topics by id (Fetch v13+)."""
    makers = REQUEST_ROWS.setdefault(request_cls, {})
    make = makers.get(response_cls)
    if make is None:
        make = makers[response_cls] = _facts_reader(request_cls, response_cls, whole_row=True)
        if _by_reference(request_cls, response_cls):
            BY_REFERENCE.add(request_cls)
        limit = _frame_limit(request_cls, response_cls)
        if limit >= 0:
            BY_FRAME[request_cls] = limit
    return make


def _fields(cls: type) -> set[str]:
    return {a.name for a in attrs.fields(cls)} if attrs.has(cls) else set()


def _facts_reader(request_cls: type, response_cls: type,
                  whole_row: bool = False) -> Callable[..., tuple]:
    req, resp = _fields(request_cls), _fields(response_cls)
    identity = _identity_parts(request_cls, "q") or "*identity(q)"
    if response_cls is type(None):
        errors = "None, ()"
    elif not attrs.has(response_cls):
        errors = "*errors(r)"
    elif _struct_arrays(response_cls):
        errors = "*errors_walk(r)"  # (the walk written out for the class: request_walk.py)
    else:
        # int(): the code by value (a row holds plain values; ErrorCode members are objects),
        # asked only of a code that is not zero: no error is the usual answer
        errors = ("int(r.error_code) if r.error_code else 0, ()" if "error_code" in resp
                  else "None, ()")
    if response_cls is type(None) or not attrs.has(response_cls):
        throttle = "getattr(r, 'throttle_time_ms', 0) or 0"
    else:
        throttle = "r.throttle_time_ms or 0" if "throttle_time_ms" in resp else "0"
    if not attrs.has(request_cls):
        partitions = "partitions(q, lookup.lookup_id)" if whole_row else "partitions(q, lookup)"
    elif _struct_arrays(request_cls):
        partitions = ("partitions_walk(q, lookup.lookup_id)" if whole_row
                      else "partitions_walk(q, lookup)")
    else:
        partitions = "()"

    def optional(name: str) -> str:
        if not attrs.has(request_cls):
            return f"getattr(q, {name!r}, None)"
        return f"q.{name}" if name in req else "None"
    head, args = "", ""
    if whole_row:
        args = (", at, connection, peer, api, key, version, correlation, client, software, "
                "software_version")
        head = (f"{_REQUEST_HANDLED!r}, at, connection, peer, api, key, version, correlation, "
                "client, software, software_version, ")
    source = (f"def facts(q, r, latency, lookup{args}):\n    return ({head}{identity}, latency, "
              f"{errors}, {throttle}, {partitions}, {optional('session_timeout_ms')}, "
              f"{optional('rebalance_timeout_ms')})\n")
    namespace: dict[str, Any] = {"identity": request_identity, "errors": response_errors,
                                 "partitions": request_partitions}
    if attrs.has(request_cls) and _struct_arrays(request_cls):
        namespace["partitions_walk"] = compiled_partitions(request_cls)
    if attrs.has(response_cls) and _struct_arrays(response_cls):
        namespace["errors_walk"] = compiled_errors(response_cls)
    exec(source, namespace)  # noqa: S102 - field names of the declarations
    return namespace["facts"]
