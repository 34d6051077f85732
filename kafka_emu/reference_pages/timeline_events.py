"""docs/reference/timeline-events.md: every event type the timeline records, and its fields.

The names are ``control.timeline.event_names()`` -- exactly what the timeline's ``types``
filter accepts (an unknown name is refused with the known ones) -- and each event's fields are
its attrs class's, with their annotations, in the order ``event_dict`` writes them.
"""

from __future__ import annotations

import inspect
import re
import typing

import attrs

from ..broker.event_rows import _event_classes
from ..control.timeline import event_names
from .common import cell, code, header, prose, table


def _annotation(cls: type, name: str) -> str:
    import sys
    try:
        hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        text = hints.get(name)
        text = typing.Any if text is None else text
        shown = getattr(text, "__name__", None) if isinstance(text, type) else None
        return (shown or str(text).replace("typing.", "")).replace(" | ", " or ")
    except Exception:  # an annotation only a type checker resolves: show it as written
        return str(attrs.fields_dict(cls)[name].type).replace(" | ", " or ")


_FIELD = re.compile(r"^    (\w+)\s*:[^#]*(?:#\s*(.*))?$")
_COMMENT = re.compile(r"^    #\s?(.*)$")


def field_comments(cls: type) -> dict[str, str]:
    """Each field's comment in the class source: the one after it on its line, or the comment
    lines just above it (where the event modules say what a field holds)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    out: dict[str, str] = {}
    above: list[str] = []
    for line in source.splitlines():
        comment = _COMMENT.match(line)
        if comment:
            above.append(comment.group(1))
            continue
        field = _FIELD.match(line)
        if field:
            text = field.group(2) or " ".join(above)
            if text:
                out[field.group(1)] = text.strip()
        above = []
    return out


def _module_label(cls: type) -> str:
    return {"kafka_emu.broker.events": "server",
            "kafka_emu.coordinator.events": "group coordinator",
            "kafka_emu.coordinator.consumer.events": "consumer groups (KIP-848)"}.get(
                cls.__module__, cls.__module__)


def render() -> str:
    classes = _event_classes()
    names = event_names()
    parts = [header(
        "timeline_events", "Timeline events",
        "Every event type the control plane's timeline records, in the form its readers get "
        "it: `emu.timeline(types=[...])`, `GET /timeline?types=...`, `kafka-emu ctl timeline "
        "--types ...` filter on these names, and each event comes back as `{\"seq\": N, "
        "\"type\": NAME, field: value, ...}` (enums by value, error codes as integers, bytes as "
        "hex; consumer-protocol subscriptions and assignments also decoded, as `subscription` "
        "and `decoded_assignments`). Times are `at_ms`, on the emulator's clock. The timeline "
        "keeps the newest `emu.timeline.max.events` (10000 by default); the trace file writes "
        "the same events (see [Trace schema](trace-schema.md))."),
        table(["type", "emitted by", "what it records"],
              [[f"[{code(n)}](#{n.lower()})", _module_label(classes[n]),
                prose((classes[n].__doc__ or "").strip().split("\n\n")[0])]
               for n in names]), ""]
    for name in names:
        cls = classes[name]
        parts += [f"## {name}", ""]
        if cls.__doc__:
            parts += [prose(cls.__doc__), ""]
        comments = field_comments(cls)
        parts += [table(["field", "type", "meaning"],
                        [[code(f.name), code(_annotation(cls, f.name)),
                          cell(comments.get(f.name, "").replace("``", "`"))]
                         for f in attrs.fields(cls)]), ""]
    return "\n".join(parts).rstrip("\n") + "\n"
