"""The writing half of the code generator: the lines that encode a struct, per wire type.

Generated write code appends to the local ``out`` (a bytearray) from the object in ``obj``.
Per wire type the same few lines are emitted whatever the API; what makes them fast:

- Consecutive fixed-width fields share one precompiled ``struct.Struct.pack`` call (bools are
  checked first: struct's "?" would take any object's truth value).
- Values that arrive already encoded are placed, not re-encoded: an ``EncodedArray`` made by a
  handler for this very plan (preencoded.py) writes its length prefix and element bytes as
  they are, and a Fetch's stored batches (``RecordsParts``, spliced.py) are spliced in.
- ``names`` lets one struct's fields be read from an object holding them under other names
  (``codegen.source_writer``): a coordinator's result is written without building a message.

A field the version lacks must still hold its default (by identity first: see
``plan.shared_default``), else the write fails with EncodeError rather than silently dropping it.
"""

from __future__ import annotations

import struct
from typing import Any

from . import primitives as p
from .generated_source import SHORT, Source, array_structs
from .plan import FIXED, Plan, default_value, plan_for
from .preencoded import EncodedArray
from .schema import BOOL, BYTES, RECORDS, STRING, UUID, VARINT, VARLONG, Array, FieldSpec
from .spliced import RecordsParts, splice


def _emit_len_write(src: Source, ind: int, flexible: bool, wide: bool, n: str, field) -> None:
    if flexible:
        src.emit(ind, f"if {n} < 127: out.append({n} + 1)", field)
        src.emit(ind, f"else: _wuv(out, {n} + 1)", field)
    elif wide:
        src.emit(ind, f"out += {src.const(struct.Struct('>i').pack, '_pk')}({n})", field)
    else:
        src.emit(ind, f"if {n} > 32767: raise ValueError(f'string of {{{n}}} bytes is longer "
                      f"than an int16 length allows')", field)
        src.emit(ind, f"out += {src.const(struct.Struct('>h').pack, '_pk')}({n})", field)


def emit_write(src: Source, ind: int, t: Any, version: int, flexible: bool, nullable: bool,
               expr: str, field: str | None) -> None:
    """Lines that append the encoding of the value ``expr`` (a local or attribute) to ``out``."""
    null_mark = "out.append(0)" if flexible else (
        "out += b'\\xff\\xff'" if t is STRING else "out += b'\\xff\\xff\\xff\\xff'")
    if t in FIXED:
        pack = src.const(struct.Struct(">" + FIXED[t]).pack, "_pk")
        if t is BOOL:
            src.emit(ind, f"if {expr}.__class__ is not bool: "
                          f"raise ValueError('not a bool: %r' % ({expr},))", field)
        src.emit(ind, f"out += {pack}({expr}{'.bytes' if t is UUID else ''})", field)
    elif t is VARINT or t is VARLONG:
        fn = src.const(p.write_varint if t is VARINT else p.write_varlong, "_wv")
        src.emit(ind, f"{fn}(out, {expr})", field)
    elif t is STRING or t is BYTES or t is RECORDS:
        nullable = nullable or t is RECORDS
        v, n = src.var("s"), src.var("n")
        src.emit(ind, f"{v} = {expr}", field)
        if nullable:
            src.emit(ind, f"if {v} is None: {null_mark}", field)
            src.emit(ind, "else:", field)
            ind += 1
        if t is STRING:
            src.emit(ind, f"{v} = {v}.encode()", field)
        if t is RECORDS:
            # a RecordsParts' size read as its slot, not through its __len__ (a Python call,
            # once per partition of every Fetch answer)
            parts = src.const(RecordsParts, "_rp")
            src.emit(ind, f"{n} = {v}.size if {v}.__class__ is {parts} else len({v})", field)
        else:
            src.emit(ind, f"{n} = len({v})", field)
        _emit_len_write(src, ind, flexible, t is not STRING, n, field)
        if t is RECORDS:
            # stored batches handed over as they are (spliced.py): placed, not copied
            src.emit(ind, f"if {v}.__class__ is {parts}: {src.const(splice, '_sp')}(out, {v})",
                     field)
            src.emit(ind, f"else: out += {v}", field)
        else:
            src.emit(ind, f"out += {v}", field)
    elif isinstance(t, Array):
        el = t.element
        v, n = src.var("a"), src.var("n")
        src.emit(ind, f"{v} = {expr}", field)
        if nullable:
            src.emit(ind, f"if {v} is None: {null_mark}", field)
            src.emit(ind, "else:", field)
            ind += 1
        if isinstance(el, type):
            # elements encoded once by a handler for this very plan (preencoded.py): its
            # length prefix and its elements' bytes, as they are
            plan = src.const(plan_for(el, version, flexible), "_pl")
            why = src.const(f"an EncodedArray made for another plan where "
                            f"{el.__name__} v{version}{' flexible' if flexible else ''} "
                            f"goes", "_why")
            src.emit(ind, f"if {v}.__class__ is {src.const(EncodedArray, '_EA')}:", field)
            src.emit(ind + 1, f"if {v}.plan is not {plan}: raise _EE({why})", field)
            src.emit(ind + 1, f"out += {v}.head", field)
            src.emit(ind + 1, f"out += {v}.data", field)
            src.emit(ind, "else:", field)
            ind += 1
        src.emit(ind, f"{n} = len({v})", field)
        _emit_len_write(src, ind, flexible, True, n, field)
        if el in FIXED and el is not UUID:
            packers = src.const(array_structs(FIXED[el], "pack"), "_pa")
            src.emit(ind, f"if {n} < {SHORT}: out += {packers}[{n}](*{v})", field)
            src.emit(ind, f"else: out += _pack('>%d{FIXED[el]}' % {n}, *{v})", field)
        else:
            item = src.var("it")
            src.emit(ind, f"for {item} in {v}:", field)
            emit_write(src, ind + 1, el, version, flexible, False, item, field)
    elif isinstance(t, type):
        plan = plan_for(t, version, flexible)
        if nullable:
            v = src.var("o")
            src.emit(ind, f"{v} = {expr}", field)
            src.emit(ind, f"if {v} is None: out.append(255)", field)
            src.emit(ind, "else:", field)
            src.emit(ind + 1, "out.append(1)", field)
            emit_struct_write(src, ind + 1, plan, v, f"{field}.")
        else:
            emit_struct_write(src, ind, plan, expr, f"{field}.")
    else:
        raise TypeError(f"unknown wire type {t!r}")


def emit_struct_write(src: Source, ind: int, plan: Plan, expr: str, path: str,
                      names: dict[str, str] | None = None) -> None:
    """Write every field of a struct in wire order; fixed-width runs share one pack call.
    ``names`` maps a field to the attribute of ``expr`` it is read from, where they differ (this
    struct's own fields only; see ``source_writer``)."""
    if names is None:
        names = {}
    if not expr.isidentifier():
        o = src.var("o")
        src.emit(ind, f"{o} = {expr}", path or None)
        expr = o
    run: list[FieldSpec] = []

    def flush() -> None:
        if run:
            for s in run:  # struct's "?" would take any object's truth value
                if s.type is BOOL:
                    a = names.get(s.name, s.name)
                    src.emit(ind, f"if {expr}.{a}.__class__ is not bool: "
                                  f"raise ValueError('not a bool: %r' % ({expr}.{a},))",
                             path + s.name)
            fmt = ">" + "".join(FIXED[s.type] for s in run)
            pack = src.const(struct.Struct(fmt).pack, "_pk")
            args = ", ".join(f"{expr}.{names.get(s.name, s.name)}"
                             f"{'.bytes' if s.type is UUID else ''}" for s in run)
            src.emit(ind, f"out += {pack}({args})", ",".join(path + s.name for s in run))
            run.clear()

    for spec, field_flexible, nullable in plan.regular:
        if spec.type in FIXED:
            run.append(spec)
            continue
        flush()
        emit_write(src, ind, spec.type, plan.version, field_flexible, nullable,
                   f"{expr}.{names.get(spec.name, spec.name)}", path + spec.name)
    flush()
    for spec in plan.absent:
        dflt = src.const(default_value(spec), "_d")
        why = src.const(f"{plan.cls.__name__}.{spec.name} does not exist in v{plan.version} "
                        f"and is not ignorable, but is set", "_why")
        value = f"{expr}.{names.get(spec.name, spec.name)}"
        src.emit(ind, f"if {value} is not {dflt} and {value} != {dflt}: raise _EE({why})",
                 path + spec.name)
    if plan.flexible:
        if plan.tag_writers:
            writers = src.const(plan.tag_writers, "_TW")
            src.emit(ind, f"_write_tags(out, {expr}, {writers})", path + "<tags>")
        else:
            src.emit(ind, "out.append(0)", path + "<tags>")
