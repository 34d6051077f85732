"""The reading half of the code generator: the lines that parse a struct, per wire type.

Generated read code works on the locals ``buf`` (bytes), ``pos`` and ``end`` == len(buf), and
leaves ``pos`` after what it read. Nothing here knows a particular message: per wire type the
same few lines are emitted whatever the API. Three choices make the generated readers fast and
still safe on hostile input:

- Consecutive fixed-width fields, and a classic length prefix right after them, come out of one
  ``struct.unpack_from`` call; a read past the end raises struct.error (or IndexError on
  ``buf[pos]``), which codec.py's entry points turn into DecodeError, so no length is checked
  before a fixed-width read.
- Slices would silently come out short instead, so they are caught by the final position check
  (``read_all``, ``Plan.read``); an array count is checked against the least its elements can
  take (``min_size_of``) before any element is built, so a count of 2^31-1 fails at once.
- A nested struct is inlined into its parent's function, and decoded instances are filled in a
  mutable twin of the frozen class that then gets its real class (builder_twin.py): no
  constructor call with keywords per struct.

Strings decode with ``errors='replace'``, as Kafka's ``new String(bytes, UTF_8)`` does.
"""

from __future__ import annotations

import struct
from typing import Any

import attrs

from . import primitives as p
from .builder_twin import builder_twin, default_of
from .generated_source import RANGES, SHORT, Source, array_structs
from .plan import (FIXED, Plan, classic_prefix, min_size_of, plan_for, shareable_default,
                   shared_default)
from .schema import BYTES, RECORDS, STRING, UUID, VARINT, VARLONG, Array


# Kafka's readers build strings with new String(bytes, UTF_8), which replaces malformed input
# with U+FFFD and never fails; so do we (a client id or group name with a stray byte is served).
_DECODE_STRING = ".decode('utf-8', 'replace')"


def _emit_fixed_read(src: Source, ind: int, items: list[tuple[Any, str, str | None]]) -> None:
    """Consecutive fixed-width values (fields, and classic length prefixes before them) come
    out of one unpack call; past the end it raises struct.error, which becomes DecodeError."""
    fmt = ">" + "".join(FIXED[t] for t, _, _ in items)
    field = ",".join(dict.fromkeys(f for _, _, f in items if f)) or None
    unpack = src.const(struct.Struct(fmt).unpack_from, "_up")
    src.emit(ind, f"{', '.join(v for _, v, _ in items)}, = {unpack}(buf, pos)", field)
    src.emit(ind, f"pos += {struct.calcsize(fmt)}", field)
    for t, v, f in items:
        if t is UUID:
            src.emit(ind, f"{v} = _UUID(bytes={v})", f)


def emit_read(src: Source, ind: int, t: Any, version: int, flexible: bool, nullable: bool,
              dst: str, field: str | None) -> None:
    """Lines that read one value of type ``t`` into ``dst`` (a local or an attribute)."""
    prefix = classic_prefix(t, flexible)
    if t in FIXED:
        _emit_fixed_read(src, ind, [(t, dst, field)])
    elif prefix is not None:
        n = src.var("n")
        _emit_fixed_read(src, ind, [(prefix, n, field)])
        _emit_body_read(src, ind, t, version, flexible, nullable, n, dst, field)
    elif t is VARINT or t is VARLONG:
        fn = src.const(p.varint_at if t is VARINT else p.varlong_at, "_rv")
        src.emit(ind, f"{dst}, pos = {fn}(buf, pos, end)", field)
    elif t is STRING or t is BYTES or t is RECORDS or isinstance(t, Array):
        # An unsigned varint N+1 (0 = null), nearly always one byte. ``n`` keeps N+1 and
        # ``pos`` is left on the varint's last byte, so the data is buf[pos + 1:pos + n].
        n = src.var("n")
        src.emit(ind, f"{n} = buf[pos]", field)
        # Two bytes (a Produce partition's records: up to 16 KiB) read here, not by a call of
        # uvarint_at (whose own fast path this is); longer or cut short, by uvarint_at.
        src.emit(ind, f"if {n} > 127:", field)
        src.emit(ind + 1, f"if pos + 1 < end and buf[pos + 1] < 128: "
                          f"{n} = ({n} & 127) | (buf[pos + 1] << 7); pos += 1", field)
        src.emit(ind + 1, f"else: {n}, pos = _uv(buf, pos, end); pos -= 1", field)
        _emit_body_read(src, ind, t, version, flexible, nullable, n, dst, field)
    elif isinstance(t, type):
        plan = plan_for(t, version, flexible)
        o = dst if dst.isidentifier() else src.var("o")
        if nullable:
            # Kafka writes a nullable struct as an int8 marker (-1 null, 1 present) first.
            src.emit(ind, "if buf[pos] >= 128:", field)
            src.emit(ind + 1, f"{o} = None", field)
            src.emit(ind + 1, "pos += 1", field)
            src.emit(ind, "else:", field)
            src.emit(ind + 1, "pos += 1", field)
            emit_struct_read(src, ind + 1, plan, o, f"{field}.")
        else:
            emit_struct_read(src, ind, plan, o, f"{field}.")
        if o != dst:
            src.emit(ind, f"{dst} = {o}", field)
    else:
        raise TypeError(f"unknown wire type {t!r}")


def _sliced(src: Source, t: Any) -> str:
    """What a value is sliced out of: ``buf``, and for RECORDS a memoryview of the
    frame, so a Produce's batches are not copied out of it only to be copied again into the log
    (the log stores its own copy, with the base offset set, and keeps no view of the frame)."""
    return f"{src.const(memoryview, '_mv')}(buf)" if t is RECORDS else "buf"


def _emit_body_read(src: Source, ind: int, t: Any, version: int, flexible: bool,
                    nullable: bool, n: str, dst: str, field: str | None) -> None:
    """What follows a length already read into ``n``: a string, bytes or an array.

    Classic (non-flexible): ``n`` is the length, -1 for null, data at ``pos``. Compact: see
    ``emit_read``."""
    nullable = nullable or t is RECORDS
    what = "string" if t is STRING else "array" if isinstance(t, Array) else "bytes"
    if flexible:
        src.emit(ind, f"if not {n}:", field)
        if nullable:
            src.emit(ind + 1, f"{dst} = None", field)
            src.emit(ind + 1, "pos += 1", field)
        else:
            src.emit(ind + 1, f"raise _bad(-1, pos, {what!r})", field)
        src.emit(ind, "else:", field)
        ind += 1
        if isinstance(t, Array):
            src.emit(ind, f"{n} -= 1", field)
            src.emit(ind, "pos += 1", field)
        else:
            e = src.var("e")
            src.emit(ind, f"{e} = pos + {n}", field)
            src.emit(ind, f"{dst} = {_sliced(src, t)}[pos + 1:{e}]"
                          f"{_DECODE_STRING if t is STRING else ''}", field)
            src.emit(ind, f"pos = {e}", field)
            return
    else:
        src.emit(ind, f"if {n} < 0:", field)
        if nullable:
            src.emit(ind + 1, f"if {n} != -1: raise _bad({n}, pos, {what!r})", field)
            src.emit(ind + 1, f"{dst} = None", field)
        else:
            src.emit(ind + 1, f"raise _bad({n}, pos, {what!r})", field)
        src.emit(ind, "else:", field)
        ind += 1
        if not isinstance(t, Array):
            e = src.var("e")
            src.emit(ind, f"{e} = pos + {n}", field)
            src.emit(ind, f"{dst} = {_sliced(src, t)}[pos:{e}]"
                          f"{_DECODE_STRING if t is STRING else ''}", field)
            src.emit(ind, f"pos = {e}", field)
            return
    el = t.element
    least = max(min_size_of(el, version, flexible, False), 1)
    # Refuse a count the data cannot hold before building anything: a count of 2^31-1 fails
    # here, not after a long loop.
    src.emit(ind, f"if {n} * {least} > end - pos: raise _many({n}, pos, end)", field)
    if el in FIXED and el is not UUID:
        # short arrays (replica lists, partition indexes) use a precompiled Struct per count
        unpackers = src.const(array_structs(FIXED[el], "unpack_from"), "_ua")
        src.emit(ind, f"if {n} < {SHORT}: {dst} = [*{unpackers}[{n}](buf, pos)]", field)
        src.emit(ind, f"else: {dst} = list(_unpack_from('>%d{FIXED[el]}' % {n}, buf, pos))",
                 field)
        src.emit(ind, f"pos += {n} * {least}", field)
        return
    lst, item = src.var("l"), src.var("it")
    src.emit(ind, f"{lst} = []", field)
    # (``n`` >= 0 here: a negative length was refused or read as null above)
    ranges = src.const(RANGES, "_rg")
    src.emit(ind, f"for _ in ({ranges}[{n}] if {n} < {len(RANGES)} else range({n})):", field)
    emit_read(src, ind + 1, el, version, flexible, False, item, field)
    src.emit(ind + 1, f"{lst}.append({item})", field)
    src.emit(ind, f"{dst} = {lst}", field)


def emit_struct_read(src: Source, ind: int, plan: Plan, dst: str, path: str) -> None:
    """Read every field of a struct in wire order and build the instance in the local ``dst``.

    With a builder twin (see ``builder_twin``) the values go straight into the new instance's
    slots, which then gets its real class; otherwise into locals, then the constructor."""
    cls = plan.cls
    attributes = attrs.fields(cls)
    twin = builder_twin(cls)
    local: dict[str, str] = {}
    if twin is not None:
        src.emit(ind, f"{dst} = {src.const(twin, '_twin')}()")
        wire = {s.name for s, _, _ in plan.regular}
        for a in attributes:  # defaults first: tagged values read later overwrite them
            if a.name in wire:
                continue
            kind, value = default_of(a)
            if kind == "factory" and isinstance(value, type) and shareable_default(value):
                # one frozen all-default instance for every read, not one built per read
                src.emit(ind, f"{dst}.{a.name} = {src.const(shared_default(value), '_dv')}")
            elif kind == "factory":
                src.emit(ind, f"{dst}.{a.name} = {src.const(value, '_fac')}()")
            elif value is None or type(value) in (bool, int) or (
                    type(value) is str and len(value) < 40):
                src.emit(ind, f"{dst}.{a.name} = {value!r}")
            else:
                src.emit(ind, f"{dst}.{a.name} = {src.const(value, '_dv')}")
    run: list[tuple[Any, str, str]] = []
    for spec, field_flexible, nullable in plan.regular:
        name = path + spec.name
        v = local[spec.name] = f"{dst}.{spec.name}" if twin is not None else src.var("f")
        t = spec.type
        if t in FIXED:
            run.append((t, v, name))
            continue
        prefix = classic_prefix(t, field_flexible)
        if prefix is not None:  # the length joins the run of fixed-width fields before it
            n = src.var("n")
            run.append((prefix, n, name))
            _emit_fixed_read(src, ind, run)
            run = []
            _emit_body_read(src, ind, t, plan.version, field_flexible, nullable, n, v, name)
            continue
        if run:
            _emit_fixed_read(src, ind, run)
            run = []
        emit_read(src, ind, t, plan.version, field_flexible, nullable, v, name)
    if run:
        _emit_fixed_read(src, ind, run)
    tv = None
    if plan.flexible:
        readers = src.const(plan.tag_readers, "_TR")
        if twin is not None:
            store = f"{dst}.__setattr__"
        else:
            tv = src.var("tv")
            src.emit(ind, f"{tv} = {{}}")
            store = f"{tv}.__setitem__"
        src.emit(ind, f"if buf[pos]: pos = _read_tags(buf, pos, end, {readers}, {store})",
                 path + "<tags>")
        src.emit(ind, "else: pos += 1", path + "<tags>")
    if twin is not None:
        src.emit(ind, f"{dst}.__class__ = {src.const(cls, '_cls')}")
        return
    ctor = src.const(cls, "_cls")
    kw = ", ".join(f"{a.alias}={local[a.name]}" for a in attributes if a.name in local)
    if tv is None:
        src.emit(ind, f"{dst} = {ctor}({kw})")
        return
    aliases = src.const({a.name: a.alias for a in attributes}, "_al")
    src.emit(ind, f"{tv} = {{{aliases}[k]: x for k, x in {tv}.items()}}")
    src.emit(ind, f"{dst} = {ctor}({kw}{', ' if kw else ''}**{tv})")
