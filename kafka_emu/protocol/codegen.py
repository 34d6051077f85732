"""Compiling declarations into encoders and decoders: the one interpreter of the schema.

Each :class:`Plan` (plan.py: a struct's wire layout at one version) is compiled to Python
functions generated as source text from its field list and ``exec``-ed (the technique of
Kafka's own message generator and of kafka-python; it makes this codec several times faster
than calling a closure per field):

* ``write(out: bytearray, obj)`` appends the encoding of ``obj``;
* ``read_at(buf: bytes, pos, end) -> (obj, pos)`` parses one struct starting at ``pos``;
* ``read_all(buf) -> obj`` parses a whole body and rejects trailing bytes.

Nothing here knows any particular message; ``codec.py`` holds the entry points and the error
mapping. The emitters are the one interpreter of the declarations, split by direction:
emit_read.py and emit_write.py know the wire types and emit, per field type, the same few lines
whatever the message; nothing is written per API. This module puts their lines into one
function per plan part (``compile_part``), compiles the standalone functions of tagged fields
(rare on the wire; two shared helpers in primitives walk the tag section with them), and
``source_writer`` writes a struct's fields from an object holding them under other names.

Each generated line is recorded against the field it serves (``LINE_FIELDS``, used by codec.py
to name the failing field; the source also goes to ``linecache`` so tracebacks show it);
``Plan.source`` shows what was generated. The module being written (``Source``) and the
helpers its code calls are in ``generated_source.py``. ``Plan``, ``plan_for`` and
``shared_default`` are importable from here, where the codec and the handlers have always
found them.
"""

from __future__ import annotations

import functools
from typing import Any

from .emit_read import emit_read, emit_struct_read
from .emit_write import emit_struct_write, emit_write
from .generated_source import Source
from .plan import Plan as Plan
from .plan import default_value
from .plan import plan_for as plan_for
from .plan import shared_default as shared_default
from .schema import fields_of


def _standalone(name: str, t: Any, version: int, flexible: bool, nullable: bool):
    """A (write, read_at) pair for one tagged field's value."""
    src = Source(name)
    src.emit(0, "def write(out, value):")
    emit_write(src, 1, t, version, flexible, nullable, "value", "value")
    src.emit(0, "def read_at(buf, pos, end):")
    emit_read(src, 1, t, version, flexible, nullable, "value", "value")
    src.emit(1, "return value, pos")
    g = src.compile()
    return g["write"], g["read_at"]


def compile_part(plan: Plan, name: str) -> tuple[Any, str]:
    """One of ``plan``'s three functions, compiled (``Plan.write`` etc. call this on first use),
    and its source."""
    src = Source(f"{plan.cls.__name__} v{plan.version}{' flexible' if plan.flexible else ''}"
                 f" {name}")
    if name == "write":
        src.emit(0, "def write(out, obj):")
        emit_struct_write(src, 1, plan, "obj", "")
        src.emit(1, "return None")
    elif name == "read_at":
        src.emit(0, "def read_at(buf, pos, end):")
        emit_struct_read(src, 1, plan, "obj", "")
        src.emit(1, "return obj, pos")
    else:  # a whole top-level body: no (obj, pos) tuple, and a trailing-bytes check
        src.emit(0, "def read_all(buf):")
        src.emit(1, "pos = 0")
        src.emit(1, "end = len(buf)")
        emit_struct_read(src, 1, plan, "obj", "")
        src.emit(1, "if pos != end: raise _overrun(pos, end)")
        src.emit(1, "return obj")
    fn = src.compile()[name]
    return fn, "\n".join(src.lines)


def compile_tags(plan: Plan) -> tuple[dict[int, tuple[str, Any]], tuple]:
    """``plan``'s tag readers (tag -> (attribute, read_at)) and tag writers ((tag, attribute,
    default, write), by tag), for primitives' tag-section helpers."""
    readers: dict[int, tuple[str, Any]] = {}
    writers = []
    for tag, spec in plan.tagged.items():
        w, r = _standalone(f"{plan.cls.__name__}.{spec.name} v{plan.version} tag {tag}",
                           spec.type, plan.version, plan.flexible,
                           plan.version in spec.nullable)
        readers[tag] = (spec.name, r)
        writers.append((tag, spec.name, default_value(spec), w))
    return readers, tuple(writers)


@functools.cache
def source_writer(plan: Plan, names: tuple[tuple[str, str], ...]):
    """``write(out, obj)`` for ``plan``'s struct, reading each field named in ``names`` (pairs
    of field, attribute) from that attribute of ``obj`` instead: the same bytes as ``plan.write``
    of a struct holding those values, written straight from an object that holds them under
    other names (a coordinator's result), so none is built just to be encoded (preencoded.py)."""
    renamed = dict(names)
    unknown = set(renamed) - {s.name for s in fields_of(plan.cls)}
    if unknown or plan.tag_writers:  # tagged fields are written by name (_write_tags)
        raise ValueError(f"cannot write {plan.cls.__name__} v{plan.version} from other names: "
                         f"{sorted(unknown) or 'it has tagged fields'}")
    src = Source(f"{plan.cls.__name__} v{plan.version}{' flexible' if plan.flexible else ''} "
                 f"from {', '.join(f'{f}={a}' for f, a in names)}")
    src.emit(0, "def write(out, obj):")
    emit_struct_write(src, 1, plan, "obj", "", renamed)
    src.emit(1, "return None")
    return src.compile()["write"]
