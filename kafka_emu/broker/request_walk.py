"""Walks over a request or response declaration: which fields are arrays of structs, the
per-partition errors of a response, the partitions a request names -- found from the
declaration, without a table per API. The observer seam's rows (``event_rows.py``) compile calls to
them into the functions that make a RequestHandled row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..protocol.schema import Array, fields_of


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
    if top is not None:
        top = int(top)  # by value, never an ErrorCode member: events hold plain values
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
                    found.append((topic or "", partition, int(code)))
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
                if topic_id is not None and not topic_id.int:
                    # the zero id: a version before ids (OffsetCommit v0-9, ...) or none given
                    topic_id = None
                info = lookup_id(topic_id) if topic_id is not None else None
                item_topic = info.name if info is not None else (
                    str(topic_id) if topic_id is not None else topic)
            ints = getattr(item, "partitions", None)
            if ints and isinstance(ints[0], int) and name != "forgotten_topics_data":
                found.extend((item_topic or "", p) for p in ints)
                continue
            if name != "forgotten_topics_data":
                _walk_request(item, item_topic, lookup_id, found)


# -- the same walks, compiled per class ------------------------------------------------------
#
# The walks above find their way through a request or response by asking each object, at every
# level, which of its fields are arrays of structs and which of the well-known names it has
# (``getattr`` with a default, ``isinstance``): about 60 Python calls for a one-partition Fetch,
# whose row the request path makes whenever anything observes. Which fields a class has is fixed
# by its declaration, so ``compiled_partitions`` and ``compiled_errors`` write each class's walk
# out once -- nested loops over exactly the arrays that can hold a partition, reading fields by
# name -- with the same answers. Where an object is not what its declaration says (a field
# missing, a value of another type), the compiled walk gives way to the walk above.

_INTS = ("int8", "int16", "uint16", "int32", "uint32", "int64", "varint", "varlong")
_FORGOTTEN = "forgotten_topics_data"  # (Fetch: partitions a session stops fetching, not named)


def _names(cls: type) -> set[str]:
    return {f.name for f in fields_of(cls)}


def _element(cls: type, name: str) -> type:
    return next(f.type.element for f in fields_of(cls) if f.name == name)


def _partition_field(names: set[str]) -> str | None:
    return ("partition_index" if "partition_index" in names
            else "partition" if "partition" in names else None)


def _int_partitions(cls: type) -> bool:
    """Whether ``cls`` has a ``partitions`` field that is an array of integers."""
    return any(f.name == "partitions" and isinstance(f.type, Array)
               and not isinstance(f.type.element, type) and f.type.element.name in _INTS
               for f in fields_of(cls))


def _topic_of(var: str, names: set[str]) -> str:
    """``getattr(item, "name", None) or getattr(item, "topic", None)`` for a class with ``names``."""
    if "name" not in names and "topic" not in names:
        return "None"
    name = f"{var}.name" if "name" in names else "None"
    topic = f"{var}.topic" if "topic" in names else "None"
    return f"({name} or {topic})"


def _errors_found(cls: type, seen: frozenset = frozenset()) -> bool:
    """Whether a ``cls`` (in an array) can add to ``response_errors``' list."""
    names = _names(cls)
    if _partition_field(names) is not None:
        return "error_code" in names
    return cls not in seen and any(_errors_found(_element(cls, n), seen | {cls})
                                   for n in _struct_arrays(cls))


def _emit_errors(lines: list[str], ind: str, cls: type, var: str, topic: str, depth: int) -> None:
    for name in _struct_arrays(cls):
        element = _element(cls, name)
        if not _errors_found(element):
            continue
        item, names = f"i{depth}", _names(element)
        lines.append(f"{ind}for {item} in {var}.{name} or ():")
        partition = _partition_field(names)
        if partition is not None:
            lines.append(f"{ind}    if {item}.error_code:")
            lines.append(f"{ind}        found.append(({topic} or '', {item}.{partition}, "
                         f"int({item}.error_code)))")
            continue
        inner = f"t{depth}"
        lines.append(f"{ind}    {inner} = {_topic_of(item, names)}")
        lines.append(f"{ind}    if not isinstance({inner}, str): {inner} = {topic}")
        _emit_errors(lines, ind + "    ", element, item, inner, depth + 1)


def _partitions_found(cls: type, name: str, seen: frozenset = frozenset()) -> bool:
    """Whether a ``cls`` in array ``name`` can add to ``request_partitions``' list."""
    names = _names(cls)
    if _partition_field(names) is not None:
        return True
    if name == _FORGOTTEN:
        return False
    return _int_partitions(cls) or (cls not in seen and any(
        _partitions_found(_element(cls, n), n, seen | {cls}) for n in _struct_arrays(cls)))


def _emit_partitions(lines: list[str], ind: str, cls: type, var: str, topic: str,
                     depth: int) -> None:
    for name in _struct_arrays(cls):
        element = _element(cls, name)
        if not _partitions_found(element, name):
            continue
        item, names = f"i{depth}", _names(element)
        lines.append(f"{ind}for {item} in {var}.{name} or ():")
        partition = _partition_field(names)
        if partition is not None:
            lines.append(f"{ind}    found.append(({topic} or '', {item}.{partition}))")
            continue
        inner = f"t{depth}"
        lines.append(f"{ind}    {inner} = {_topic_of(item, names)}")
        lines.append(f"{ind}    if not (isinstance({inner}, str) and {inner}):")
        if "topic_id" in names:  # by id (Fetch v13+): its name, else its text; the zero id: none
            lines.append(f"{ind}        tid = {item}.topic_id")
            lines.append(f"{ind}        if tid is not None and not tid.int: tid = None")
            lines.append(f"{ind}        info = lookup_id(tid) if tid is not None else None")
            lines.append(f"{ind}        {inner} = info.name if info is not None else "
                         f"(str(tid) if tid is not None else {topic})")
        else:
            lines.append(f"{ind}        {inner} = {topic}")
        body = ind + "    "
        if _int_partitions(element):
            lines.append(f"{body}ints = {item}.partitions")
            lines.append(f"{body}if ints:")
            lines.append(f"{body}    for p in ints: found.append(({inner} or '', p))")
            lines.append(f"{body}else:")
            body += "    "
        before = len(lines)
        _emit_partitions(lines, body, element, item, inner, depth + 1)
        if len(lines) == before:
            lines.append(f"{body}pass")


def _compile(name: str, signature: str, lines: list[str], result: str,
             fallback: Callable[..., Any], cls: type) -> Callable[..., Any]:
    body = "\n".join("        " + line for line in lines)
    source = (f"def {name}({signature}):\n    try:\n        found = []\n{body}\n"
              f"        return {result}\n    except (AttributeError, TypeError):\n"
              f"        return fallback({signature})\n")
    namespace: dict[str, Any] = {"fallback": fallback}
    exec(compile(source, f"<kafka_emu.request_walk {name} {cls.__qualname__}>", "exec"),  # noqa: S102
         namespace)
    return namespace[name]


def compiled_partitions(cls: type) -> Callable[[Any, Callable[[Any], Any]], tuple]:
    """``request_partitions`` for requests of class ``cls``, compiled (cached per class)."""
    cached = cls.__dict__.get("__kafka_partitions_walk__")
    if cached is None:
        lines: list[str] = []
        _emit_partitions(lines, "", cls, "q", "None", 0)
        cached = _compile("partitions", "q, lookup_id", lines, "tuple(found)",
                          request_partitions, cls)
        setattr(cls, "__kafka_partitions_walk__", cached)
    return cached


def compiled_errors(cls: type) -> Callable[[Any], tuple]:
    """``response_errors`` for responses of class ``cls``, compiled (cached per class)."""
    cached = cls.__dict__.get("__kafka_errors_walk__")
    if cached is None:
        lines: list[str] = []
        _emit_errors(lines, "", cls, "r", "None", 0)
        top = ("int(r.error_code)" if "error_code" in _names(cls) else "None")
        cached = _compile("errors", "r", lines, f"{top}, tuple(found)", response_errors, cls)
        setattr(cls, "__kafka_errors_walk__", cached)
    return cached
