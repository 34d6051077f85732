"""docs/reference/trace-schema.md: every record kind of a trace file, from its one declaration.

``kafka_emu/trace/schema.py`` declares the kinds (the server's and the coordinator's event
classes, mapped from their annotations, plus the records that are not events); the committed
``trace-schema.json`` and the report's Spark schema derive from the same ``KINDS``, and so does
this page.
"""

from __future__ import annotations

from typing import Any

from ..trace.schema import COMMON, KINDS, SCHEMA_VERSION, ArrayOf, MapOf, Scalar, StructOf
from .common import cell, code, header, prose, table
from .timeline_events import field_comments


def type_text(tp: Any) -> str:
    if isinstance(tp, Scalar):
        return tp.name
    if isinstance(tp, ArrayOf):
        return f"array of {type_text(tp.element)}"
    if isinstance(tp, MapOf):
        return f"map of string to {type_text(tp.value)}"
    if isinstance(tp, StructOf):
        return "{" + ", ".join(f"{name}: {type_text(t)}" for name, t in tp.fields) + "}"
    raise TypeError(tp)


def render() -> str:
    common = {"kind": "the record's kind (below)", "run": "the run id, the same on every line",
              "seq": "0, 1, 2, ... in emission order within the run",
              "at_ms": "epoch milliseconds on the emulator's clock"}
    parts = [header(
        "trace_schema", "Trace schema",
        f"A trace (`kafka-emu serve --trace-dir DIR`, or the fixtures' trace option) is JSON "
        f"Lines: one object per line, one line per record; this is schema version "
        f"{SCHEMA_VERSION}. Every field may be null in a reader's view (a field a kind does not "
        f"have is null in a table of all kinds); adding a kind or a field does not change the "
        f"version. The same declaration is committed as JSON Schema 2020-12 in "
        f"`kafka_emu/trace/trace-schema.json` (`python -m kafka_emu.trace` rewrites it) and "
        f"gives the report's Spark schema."),
        "## Every record", "",
        table(["field", "type", "meaning"],
              [[code(f.name), type_text(f.type), common[f.name]] for f in COMMON]), "",
        "## Kinds", "",
        table(["kind", "from"], [[f"[{code(k.name)}](#{k.name})",
                                  code(k.event_class.__name__) + " event" if k.event_class
                                  else "the trace writer"] for k in KINDS.values()]), ""]
    for kind in KINDS.values():
        parts += [f"### {kind.name}", ""]
        if kind.doc:
            parts += [prose(kind.doc), ""]
        if kind.fields:
            comments = field_comments(kind.event_class) if kind.event_class else {}
            parts += [table(["field", "type", "meaning"],
                            [[code(f.name), code(type_text(f.type)),
                              cell(comments.get(f.name, "").replace("``", "`"))]
                             for f in kind.fields]), ""]
        else:
            parts += ["No fields beyond those of every record.", ""]
    return "\n".join(parts).rstrip("\n") + "\n"
