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
