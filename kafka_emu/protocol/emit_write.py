"""The writing half of the code generator: the lines that encode a struct, per wire type.

Generated write code appends to the local ``out`` (a bytearray) from the object in ``obj``.
Per wire type the same few lines are emitted whatever the API; what makes them fast:

- Consecutive fixed-width fields share one precompiled ``struct.Struct.pack`` call (bools are
  checked first: struct's "?" would take any object's truth value), and so does a classic
  (non-flexible) length prefix right after them, or its null marker: the run is held back
  (a ``Lead``) until the length is known. A pack call costs several hundred instructions,
  once per field run of every struct written (a Fetch answer's partition wrote three).
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
from .plan import FIXED, Plan, classic_prefix, default_value, plan_for
from .preencoded import EncodedArray
from .schema import BOOL, BYTES, RECORDS, STRING, UUID, VARINT, VARLONG, Array
from .spliced import RecordsParts, SplicedOutput, splice


# Fixed-width fields held back to be packed with the length prefix after them: (struct format
# without the byte order, the argument expressions, the fields' names for LINE_FIELDS).
Lead = tuple[str, str, str]


def _packed(src: Source, lead: Lead | None, fmt: str = "", value: str | None = None,
            field: str | None = None) -> tuple[str, str | None]:
    """(the statement that packs ``lead``'s fields and then ``value`` of format ``fmt`` onto
    ``out`` in one call, the fields it writes)."""
    lead_fmt, args, names = lead if lead is not None else ("", "", "")
    if value is not None:
        lead_fmt, args = lead_fmt + fmt, f"{args}, {value}" if args else value
        names = f"{names},{field}" if names else (field or "")
    pack = src.const(struct.Struct(">" + lead_fmt).pack, "_pk")
    return f"out += {pack}({args})", names or None


def _emit_len_write(src: Source, ind: int, flexible: bool, wide: bool, n: str, field,
                    lead: Lead | None = None) -> None:
    if flexible:
        src.emit(ind, f"if {n} < 127: out.append({n} + 1)", field)
        src.emit(ind, f"else: _wuv(out, {n} + 1)", field)
        return
    if not wide:
        src.emit(ind, f"if {n} > 32767: raise ValueError(f'string of {{{n}}} bytes is longer "
                      f"than an int16 length allows')", field)
    src.emit(ind, *_packed(src, lead, "i" if wide else "h", n, field))


def emit_write(src: Source, ind: int, t: Any, version: int, flexible: bool, nullable: bool,
               expr: str, field: str | None, lead: Lead | None = None) -> None:
    """Lines that append the encoding of the value ``expr`` (a local or attribute) to ``out``.
    ``lead``: fixed-width fields to pack before it, with its classic length prefix (only for a
    type that has one)."""
    if lead is not None and classic_prefix(t, flexible) is None:
        raise TypeError(f"{field}: no classic length prefix to pack fields before with")
    null_mark = "out.append(0)" if flexible else (
        "out += b'\\xff\\xff'" if t is STRING else "out += b'\\xff\\xff\\xff\\xff'")
    null_field = field
    if lead is not None:  # (a null marker is a length of -1, packed with the lead)
        null_mark, null_field = _packed(src, lead, "h" if t is STRING else "i", "-1", field)
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
            src.emit(ind, f"if {v} is None: {null_mark}", null_field)
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
        _emit_len_write(src, ind, flexible, t is not STRING, n, field, lead)
        if t is RECORDS:
            # stored batches handed over as they are (spliced.py): placed, not copied
            # (splice's usual case written out: one Python call less per partition of a Fetch)
            spliced = src.const(SplicedOutput, "_so")
            src.emit(ind, f"if {v}.__class__ is {parts}:", field)
            src.emit(ind + 1, f"if out.__class__ is {spliced}:", field)
            src.emit(ind + 2, f"out.spliced.append((len(out), {v}))", field)
            src.emit(ind + 2, f"out.spliced_size += {n}", field)
            src.emit(ind + 1, f"else: {src.const(splice, '_sp')}(out, {v})", field)
            src.emit(ind, f"else: out += {v}", field)
        else:
            src.emit(ind, f"out += {v}", field)
    elif isinstance(t, Array):
        el = t.element
        v, n = src.var("a"), src.var("n")
        src.emit(ind, f"{v} = {expr}", field)
        if nullable:
            src.emit(ind, f"if {v} is None: {null_mark}", null_field)
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
            if lead is not None:
                src.emit(ind + 1, *_packed(src, lead))
            src.emit(ind + 1, f"out += {v}.head", field)
            src.emit(ind + 1, f"out += {v}.data", field)
            src.emit(ind, "else:", field)
            ind += 1
        src.emit(ind, f"{n} = len({v})", field)
        _emit_len_write(src, ind, flexible, True, n, field, lead)
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
    _emit_fields(src, ind, plan, plan.regular, expr, path, names, [], True)
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


# One fixed-width value held back in a run: (format, argument expression, field name, a bool).
_Held = tuple[str, str, str, bool]


def _emit_fields(src: Source, ind: int, plan: Plan, fields, expr: str, path: str,
                 names: dict[str, str], run: list[_Held], may_split: bool) -> None:
    """``fields`` of ``plan`` in order, after the fixed-width values ``run`` holds back.

    The first classic nullable field (``may_split``) is tested for null before anything is
    written: a null one is only its length, -1, a fixed-width value, so in that branch the run
    goes on through it -- a Fetch answer's partition, whose aborted_transactions is null for a
    read_uncommitted consumer, is one pack call instead of two. The fields after it are emitted
    in both branches (once per struct: at most twice the lines)."""
    run = list(run)

    def held() -> Lead | None:
        """The run so far as a Lead (its bools checked), and a new run begun."""
        if not run:
            return None
        for _, arg, name, is_bool in run:  # struct's "?" would take any object's truth value
            if is_bool:
                src.emit(ind, f"if {arg}.__class__ is not bool: "
                              f"raise ValueError('not a bool: %r' % ({arg},))", name)
        lead = ("".join(h[0] for h in run), ", ".join(h[1] for h in run),
                ",".join(h[2] for h in run))
        run.clear()
        return lead

    for i, (spec, field_flexible, nullable) in enumerate(fields):
        value = f"{expr}.{names.get(spec.name, spec.name)}"
        name = path + spec.name
        if spec.type in FIXED:
            run.append((FIXED[spec.type], value + (".bytes" if spec.type is UUID else ""),
                        name, spec.type is BOOL))
            continue
        prefix = classic_prefix(spec.type, field_flexible)
        if prefix is None:
            lead = held()
            if lead is not None:
                src.emit(ind, *_packed(src, lead))
            emit_write(src, ind, spec.type, plan.version, field_flexible, nullable, value, name)
            continue
        if may_split and nullable:
            v = src.var("v")
            src.emit(ind, f"{v} = {value}", name)
            src.emit(ind, f"if {v} is None:", name)
            _emit_fields(src, ind + 1, plan, fields[i + 1:], expr, path, names,
                         [*run, (FIXED[prefix], "-1", name, False)], False)
            src.emit(ind, "else:", name)
            emit_write(src, ind + 1, spec.type, plan.version, field_flexible, False, v, name,
                       held())  # (not null here)
            _emit_fields(src, ind + 1, plan, fields[i + 1:], expr, path, names, [], False)
            return
        emit_write(src, ind, spec.type, plan.version, field_flexible, nullable, value, name,
                   held())  # the run packed with the length prefix
    lead = held()
    if lead is not None:
        src.emit(ind, *_packed(src, lead))
