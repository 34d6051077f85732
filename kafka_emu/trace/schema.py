"""The trace schema, declared once: every record kind, its fields and their types.

Theory of operation. A trace is JSON Lines: one object per line, one line per event. Every
record carries ``kind`` (the event class name in snake_case, e.g. ``request_handled``), ``run``
(the run id), ``seq`` (0, 1, 2, ... in emission order within the run) and ``at_ms`` (epoch
milliseconds on the emulator's clock). The other fields are the event's own.

The event classes ARE the model (``broker/events.py`` and ``coordinator/events.py``): their
attrs fields are mapped generically from the type annotations (int -> long, str -> string,
enums -> their value, ``X | None`` -> nullable X, ``tuple[str, ...]`` -> array of string). Only
fields whose meaning the annotation cannot carry get an explicit type in ``_OVERRIDES``: tuples
of tuples become arrays of named structs, and the consumer-protocol bytes of MemberSubscribed
and AssignmentsDistributed are decoded into topics and partitions. Records that are not server
events -- run start and end, the writer's topic snapshot, conformance verdicts -- are declared
in ``_EXTRA_KINDS``.

Everything else derives from this declaration: ``to_record(event)`` (the writer, the timeline
and the HTTP surface can all use it), ``json_schema()`` (committed as ``trace-schema.json``;
``python -m kafka_emu.trace`` rewrites it, a test checks it is up to date) and the Spark
StructType, which ``kafka_emu/report`` builds from ``columns()`` (pyspark is imported only there).

Bump ``SCHEMA_VERSION`` when a field changes type or meaning; adding a field or a kind does not
need a bump (readers with an explicit schema ignore unknown fields and see missing ones as null).
"""

from __future__ import annotations

import base64
import enum
import json
import re
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ..broker import events as server_events
from ..broker.event_rows import as_event, row_class
from ..coordinator import events as coordinator_events
from ..coordinator.consumer import events as consumer_group_events
from ..protocol.errors import DecodeError
from ..protocol.messages import consumer_protocol
from .array_text import array_formatter

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("trace-schema.json")


# -- a tiny type language: what JSON Schema and Spark both understand ------------------------

@attrs.frozen
class Scalar:
    name: str  # "string", "long", "double", "boolean"


@attrs.frozen
class ArrayOf:
    element: Any


@attrs.frozen
class StructOf:
    fields: tuple[tuple[str, Any], ...]


@attrs.frozen
class MapOf:
    """string keys -> values of one type (config, labels)."""
    value: Any


STRING, LONG, DOUBLE, BOOLEAN = Scalar("string"), Scalar("long"), Scalar("double"), Scalar("boolean")

TOPIC_PARTITION = StructOf((("topic", STRING), ("partition", LONG)))
TOPIC_PARTITIONS = StructOf((("topic", STRING), ("partitions", ArrayOf(LONG))))


@attrs.frozen
class Field:
    name: str
    type: Any
    convert: Callable[[Any], Any] | None = None  # None: the value is already JSON-ready


@attrs.frozen
class Kind:
    name: str
    fields: tuple[Field, ...]
    event_class: type | None = None
    doc: str = ""


COMMON = (Field("kind", STRING), Field("run", STRING), Field("seq", LONG), Field("at_ms", LONG))


# -- converters for the fields the annotations cannot describe -------------------------------

def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _topic_partitions(items) -> list[dict]:
    return [{"topic": t.topic, "partitions": list(t.partitions)} for t in items or ()]


def decode_subscription(protocol_type: str | None, metadata: bytes) -> dict:
    """JoinGroup metadata as {topics, owned_partitions, rack_id, raw}: decoded when the group
    speaks the consumer protocol, else (or when it does not parse) only ``raw`` (base64)."""
    if protocol_type == "consumer":
        try:
            sub = consumer_protocol.decode_subscription(metadata)
        except DecodeError:
            pass
        else:
            return {"topics": list(sub.topics), "owned_partitions": _topic_partitions(
                sub.owned_partitions), "rack_id": sub.rack_id, "raw": None}
    return {"topics": None, "owned_partitions": None, "rack_id": None, "raw": _b64(metadata)}


def decode_assignments(protocol_type: str | None, assignments) -> list[dict]:
    """SyncGroup assignments as [{member_id, topics: [{topic, partitions}], raw}]."""
    out = []
    for member_id, data in assignments:
        item = {"member_id": member_id, "topics": None, "raw": None}
        if protocol_type == "consumer":
            try:
                item["topics"] = _topic_partitions(
                    consumer_protocol.decode_assignment(data).assigned_partitions)
            except DecodeError:
                item["raw"] = _b64(data)
        else:
            item["raw"] = _b64(data)
        out.append(item)
    return out


SUBSCRIPTION = StructOf((("topics", ArrayOf(STRING)), ("owned_partitions", ArrayOf(TOPIC_PARTITIONS)),
                         ("rack_id", STRING), ("raw", STRING)))
ASSIGNMENT = StructOf((("member_id", STRING), ("topics", ArrayOf(TOPIC_PARTITIONS)),
                       ("raw", STRING)))


def _named(*names: str) -> Callable[[Any], list[dict]]:
    def convert(items: Any) -> list[dict]:
        return [dict(zip(names, item)) for item in items]
    convert.names = names  # type: ignore[attr-defined]  # (array_text compiles from them)
    return convert


# (class name, field name) -> Field; "convert" gets the whole event when it is a method below
_OVERRIDES: dict[tuple[str, str], Field] = {
    ("RequestHandled", "partition_errors"): Field(
        "partition_errors", ArrayOf(StructOf((("topic", STRING), ("partition", LONG),
                                               ("error_code", LONG)))),
        _named("topic", "partition", "error_code")),
    ("RequestHandled", "partitions"): Field("partitions", ArrayOf(TOPIC_PARTITION),
                                            _named("topic", "partition")),
    ("OffsetsCommitted", "offsets"): Field(
        "offsets", ArrayOf(StructOf((("topic", STRING), ("partition", LONG), ("offset", LONG)))),
        _named("topic", "partition", "offset")),
    ("OffsetsRemoved", "partitions"): Field("partitions", ArrayOf(TOPIC_PARTITION),
                                            _named("topic", "partition")),
    ("TransactionEnded", "partitions"): Field("partitions", ArrayOf(TOPIC_PARTITION),
                                              _named("topic", "partition")),
    ("TransactionBegun", "partitions"): Field("partitions", ArrayOf(TOPIC_PARTITION),
                                              _named("topic", "partition")),
    ("MemberSubscribed", "metadata"): Field("metadata", SUBSCRIPTION),
    ("AssignmentsDistributed", "assignments"): Field("assignments", ArrayOf(ASSIGNMENT)),
    # the coordinator's request ids are the broker's integer counter
    # consumer groups (KIP-848): partitions by topic, a target per member
    ("MemberReconciled", "assigned"): Field("assigned", ArrayOf(TOPIC_PARTITIONS),
                                            _named("topic", "partitions")),
    ("MemberReconciled", "pending_revocation"): Field(
        "pending_revocation", ArrayOf(TOPIC_PARTITIONS), _named("topic", "partitions")),
    ("TargetAssignmentComputed", "changed"): Field(
        "changed", ArrayOf(StructOf((("member_id", STRING), ("topics", ArrayOf(TOPIC_PARTITIONS))))),
        lambda items: [{"member_id": m, "topics": [{"topic": t, "partitions": list(ps)}
                                                   for t, ps in a]} for m, a in items]),
    ("RequestParked", "request_id"): Field("request_id", LONG),
    ("RequestDropped", "request_id"): Field("request_id", LONG),
    ("ReplyEmitted", "request_id"): Field("request_id", LONG),
}

# Fields decoded from their event as a whole (they need protocol_type beside the bytes).
_WHOLE_EVENT = {
    ("MemberSubscribed", "metadata"): lambda e: decode_subscription(e.protocol_type, e.metadata),
    ("AssignmentsDistributed", "assignments"):
        lambda e: decode_assignments(e.protocol_type, e.assignments),
}

_EXTRA_KINDS = (
    Kind("run_start", (
        Field("schema_version", LONG), Field("emu_version", STRING),
        Field("config", MapOf(STRING)), Field("labels", MapOf(STRING)),
        Field("host", STRING), Field("port", LONG),
        Field("broker_api_versions", MapOf(LONG))),
        doc="First line of every trace: who ran, with what configuration and labels, and the "
            "highest version of each API the broker advertised."),
    Kind("run_end", (Field("events", LONG), Field("written", LONG), Field("dropped", LONG),
                     Field("dropped_disk", LONG), Field("write_failures", LONG),
                     Field("reason", STRING)),
         doc="Last line when the run ended cleanly (absent after a crash). events: the records "
             "before it (seq 0 to events-1, run_start included); written: how many of them are "
             "lines of this file; dropped: events - written, every record lost whatever the "
             "cause; dropped_disk: those of dropped a failed write lost (a full disk; the write "
             "was rolled back to the last whole line), the rest died with the encoder process; "
             "write_failures: the writes that failed."),
    Kind("topics_known", (
        Field("topic_partitions", ArrayOf(StructOf((("topic", STRING), ("count", LONG))))),),
        doc="The broker's topics and partition counts, written before an assignment is "
            "distributed, so a reader can tell which subscribed partitions went unassigned."),
    Kind("scenario_verdict", (
        Field("scenario", STRING), Field("client", STRING), Field("client_version", STRING),
        Field("verdict", STRING), Field("reason", STRING), Field("seconds", DOUBLE)),
        doc="A conformance scenario's outcome for one client: verdict is \"pass\" or \"fail\"."),
)


# -- the generic mapping from annotations ----------------------------------------------------

def _scalar_of(tp: Any) -> tuple[Any, Callable[[Any], Any] | None] | None:
    if tp is bool:
        return BOOLEAN, None
    if tp is int:
        return LONG, None
    if tp is float:
        return DOUBLE, None
    if tp is str:
        return STRING, None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        sample = next(iter(tp)).value
        return (LONG if isinstance(sample, int) else STRING), _enum_value
    return None


def _enum_value(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _map_annotation(tp: Any) -> tuple[Any, Callable[[Any], Any] | None]:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _map_annotation(inner[0])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        element = _scalar_of(args[0])
        if element is not None:
            elem_type, convert = element
            if convert is None:
                return ArrayOf(elem_type), list
            return ArrayOf(elem_type), lambda items, c=convert: [c(i) for i in items]
    scalar = _scalar_of(tp)
    if scalar is not None:
        return scalar
    # Anything else (a new field with a shape nobody declared yet) is kept readable as text.
    return STRING, repr


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _kind_of_class(cls: type) -> Kind:
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    fields = []
    for f in attrs.fields(cls):
        if f.name == "at_ms":
            continue
        override = _OVERRIDES.get((cls.__name__, f.name))
        if override is not None:
            fields.append(override)
            continue
        tp, convert = _map_annotation(hints.get(f.name, Any))
        fields.append(Field(f.name, tp, convert))
    return Kind(_snake(cls.__name__), tuple(fields), cls, (cls.__doc__ or "").strip())


def event_classes() -> tuple[type, ...]:
    """Every attrs event class of the two event modules, in declaration order."""
    out = []
    for module in (server_events, coordinator_events, consumer_group_events):
        for value in vars(module).values():
            if (isinstance(value, type) and attrs.has(value) and value.__module__ == module.__name__
                    and "at_ms" in attrs.fields_dict(value)):
                out.append(value)
    return tuple(out)


def _build() -> tuple[dict[str, Kind], dict[type, Kind]]:
    kinds: dict[str, Kind] = {}
    by_class: dict[type, Kind] = {}
    for cls in event_classes():
        kind = _kind_of_class(cls)
        kinds[kind.name] = by_class[cls] = kind
    for kind in _EXTRA_KINDS:
        kinds[kind.name] = kind
    return kinds, by_class


KINDS, _BY_CLASS = _build()


# -- records ---------------------------------------------------------------------------------

def _converter(kind: Kind) -> Callable[[Any], dict]:
    cls_name = kind.event_class.__name__
    plan = []
    for f in kind.fields:
        whole = _WHOLE_EVENT.get((cls_name, f.name))
        plan.append((f.name, whole, f.convert))
    kind_name = kind.name

    def convert(event: Any) -> dict:
        record = {"kind": kind_name, "at_ms": event.at_ms}
        for name, whole, conv in plan:
            if whole is not None:
                record[name] = whole(event)
                continue
            value = getattr(event, name)
            record[name] = value if conv is None or value is None else conv(value)
        return record
    return convert


_CONVERTERS = {cls: _converter(kind) for cls, kind in _BY_CLASS.items()}


def to_record(event: Any) -> dict:
    """The JSON-ready dict of one event (without ``run`` and ``seq``, which the writer adds).

    Events of a class not declared here (yet) are mapped on the fly with the same rules.
    ``event`` may be a row (``broker/event_rows.py``)."""
    event = as_event(event)
    convert = _CONVERTERS.get(type(event))
    if convert is None:
        convert = _CONVERTERS[type(event)] = _converter(_kind_of_class(type(event)))
    return convert(event)


# -- JSON lines straight from events: the writer's fast path ---------------------------------

_enc_str = json.encoder.encode_basestring_ascii  # C; quotes and escapes
_dumps = json.JSONEncoder(separators=(",", ":"), default=str).encode


# Runs of RequestHandled's fields whose values repeat from one request to the next (the
# connection and API; the client and the member; the outcome): a row encoder formats each run
# once per distinct combination and reuses the text (a cache per run, emptied when it grows past
# _FRAGMENT_CACHE entries). The line is the same, character for character.
_ROW_FRAGMENTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "RequestHandled": (
        ("connection_id", "peer", "api", "api_key", "version"),
        ("client_id", "client_software_name", "client_software_version", "group_id",
         "member_id", "group_instance_id", "generation_id"),
        ("error_code", "partition_errors", "throttle_time_ms", "partitions",
         "session_timeout_ms", "rebalance_timeout_ms")),
    # a member's commits name the same group, member and generation (their offsets move)
    "OffsetsCommitted": (("group_id", "member_id", "generation_id"),),
}
_FRAGMENT_CACHE = 4096


def _array_text(f: Field) -> Callable[[Any], str] | None:
    """The compiled text of an array of flat structs (``array_text.py``), if f is one."""
    names = getattr(f.convert, "names", None)
    if not (isinstance(f.type, ArrayOf) and isinstance(f.type.element, StructOf)):
        return None
    fields = f.type.element.fields
    if names != tuple(n for n, _ in fields) or not all(isinstance(t, Scalar) for _, t in fields):
        return None
    convert = f.convert
    return array_formatter(names, tuple(t.name for _, t in fields),
                           lambda items: _dumps(convert(items)))


def _line_encoder(kind: Kind, rows: bool = False) -> Callable[[Any, str, int], str]:
    """Compile one function per kind that formats a whole line in one f-string (the trace
    writer's hot path: about twice as fast as building the dict and calling json.dumps).
    With ``rows`` the function reads the event's row (``broker/event_rows.py``) instead: the
    same line from the same values, by position."""
    cls_name = kind.event_class.__name__
    if rows and any((cls_name, f.name) in _WHOLE_EVENT for f in kind.fields):
        encode = _line_encoder(kind)
        return lambda r, run_json, seq: encode(as_event(r), run_json, seq)
    position = {a.name: i + 1 for i, a in enumerate(attrs.fields(kind.event_class))}

    def read(name: str) -> str:
        return f"e[{position[name]}]" if rows else f"e.{name}"
    env: dict[str, Any] = {"enc": _enc_str, "dumps": _dumps, "LIMIT": _FRAGMENT_CACHE}
    code: dict[str, tuple[list[str], str]] = {}  # field -> (statements, its part of the line)
    for i, f in enumerate(kind.fields):
        v = f"v{i}"
        body = []
        whole = _WHOLE_EVENT.get((cls_name, f.name))
        if whole is not None:
            env[f"w{i}"] = whole
            body.append(f"    {v} = dumps(w{i}(e))")
        else:
            body.append(f"    {v} = {read(f.name)}")
            if f.convert is None and f.type == STRING:
                body.append(f"    {v} = 'null' if {v} is None else enc({v})")
            elif f.type == LONG and f.convert in (None, _enum_value):
                body.append(f"    {v} = 'null' if {v} is None else format({v}, 'd')")
            elif f.convert is None and f.type == DOUBLE:
                body.append(f"    {v} = 'null' if {v} is None else repr(float({v}))")
            elif f.convert is None:
                body.append(f"    {v} = dumps({v})")
            else:
                env[f"c{i}"] = _array_text(f) or f.convert
                call = f"c{i}({v})" if env[f"c{i}"] is not f.convert else f"dumps(c{i}({v}))"
                body.append(f"    {v} = 'null' if {v} is None else '[]' if {v} == () "
                            f"else {call}")
        code[f.name] = (body, f',"{f.name}":{{{v}}}')
    runs = _ROW_FRAGMENTS.get(cls_name, ()) if rows else ()
    in_run = {name: j for j, run in enumerate(runs) for name in run}
    source = []
    for j, run in enumerate(runs):
        first, last = position[run[0]], position[run[-1]]
        if [position[name] for name in run] != list(range(first, last + 1)):
            raise TypeError(f"{cls_name}: fragment {run} is not a run of adjacent fields")
        env[f"cache{j}"] = {}
        source.append(f"def frag{j}(e):\n" + "\n".join(
            line for name in run for line in code[name][0]) +
            "\n    return f'" + "".join(code[name][1] for name in run) + "'\n")
    body, parts = [], [f'{{{{"kind":"{kind.name}","run":{{run_json}},"seq":{{seq}},'
                       f'"at_ms":{{{read("at_ms")}:d}}']
    for f in kind.fields:
        j = in_run.get(f.name)
        if j is None:
            body.extend(code[f.name][0])
            parts.append(code[f.name][1])
        elif f.name == runs[j][0]:
            first, last = position[runs[j][0]], position[runs[j][-1]]
            body += [f"    k{j} = e[{first}:{last + 1}]",
                     f"    f{j} = cache{j}.get(k{j})",
                     f"    if f{j} is None:",
                     f"        f{j} = frag{j}(e)",
                     f"        if len(cache{j}) >= LIMIT:",
                     f"            cache{j}.clear()",
                     f"        cache{j}[k{j}] = f{j}"]
            parts.append(f"{{f{j}}}")
    source.append("def line(e, run_json, seq):\n" + "\n".join(body) +
                  "\n    return f'" + "".join(parts) + "}}\\n'\n")
    exec(compile("\n".join(source), f"<trace line {kind.name}>", "exec"), env)
    return env["line"]


_LINE_ENCODERS = {cls: _line_encoder(kind) for cls, kind in _BY_CLASS.items()}
_ROW_ENCODERS: dict[str, Callable[[Any, str, int], str]] = {}


def to_json_line(event: Any, run: str, seq: int) -> str:
    """One trace line (with its newline) for an event (object or row): the same content as
    ``json.dumps(to_record(event) | {"run": run, "seq": seq})``, built without the dict."""
    return line_encoder(event)(event, _enc_str(run), seq)


def line_encoder(event: Any) -> Callable[[Any, str, int], str]:
    """The compiled ``(event, run as JSON, seq) -> line`` function for this event's form and
    class (the writer calls it with the run id encoded once)."""
    if type(event) is tuple:
        tag = event[0]
        encode = _ROW_ENCODERS.get(tag)
        if encode is None:
            cls = row_class(tag)
            kind = _BY_CLASS.get(cls) or _kind_of_class(cls)
            encode = _ROW_ENCODERS[tag] = _line_encoder(kind, rows=True)
        return encode
    encode = _LINE_ENCODERS.get(type(event))
    if encode is None:
        encode = _LINE_ENCODERS[type(event)] = _line_encoder(_kind_of_class(type(event)))
    return encode


def encode_run(run: str) -> str:
    """The run id as the JSON text the line encoders take."""
    return _enc_str(run)


# -- the union of all fields: one table for Spark, one JSON Schema ---------------------------

def columns() -> tuple[tuple[str, Any], ...]:
    """Every top-level field of every kind, once, in a stable order: the table a reader sees.
    Two kinds that use one name with two types are a declaration error."""
    seen: dict[str, Any] = {}
    for kind in KINDS.values():
        for f in (*COMMON, *kind.fields):
            prior = seen.setdefault(f.name, f.type)
            if prior != f.type:
                raise TypeError(f"trace field {f.name!r} of {kind.name} is {f.type}, "
                                f"elsewhere {prior}: rename one of them")
    return tuple(seen.items())


def _json_type(tp: Any, nullable: bool = True) -> dict:
    if isinstance(tp, Scalar):
        base = {"string": "string", "long": "integer", "double": "number",
                "boolean": "boolean"}[tp.name]
        return {"type": [base, "null"] if nullable else base}
    if isinstance(tp, ArrayOf):
        return {"type": ["array", "null"], "items": _json_type(tp.element)}
    if isinstance(tp, MapOf):
        return {"type": ["object", "null"], "additionalProperties": _json_type(tp.value)}
    if isinstance(tp, StructOf):
        return {"type": ["object", "null"],
                "properties": {name: _json_type(t) for name, t in tp.fields}}
    raise TypeError(tp)


def json_schema() -> dict:
    columns()  # the same consistency check Spark's table needs
    defs = {}
    for kind in KINDS.values():
        props = {"kind": {"const": kind.name}, "run": {"type": "string"},
                 "seq": {"type": "integer"}, "at_ms": {"type": "integer"}}
        props.update({f.name: _json_type(f.type) for f in kind.fields})
        defs[kind.name] = {"description": kind.doc, "type": "object", "properties": props,
                           "required": ["kind", "run", "seq", "at_ms",
                                        *(f.name for f in kind.fields)]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"kafka-emu-trace-v{SCHEMA_VERSION}",
        "title": f"kafka-emu trace record, schema version {SCHEMA_VERSION}",
        "description": "One JSON object per line of a kafka-emu trace file "
                       "(generated from kafka_emu/trace/schema.py; do not edit by hand).",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in defs],
        "$defs": defs,
    }


def render_json_schema() -> str:
    return json.dumps(json_schema(), indent=1, sort_keys=False) + "\n"

