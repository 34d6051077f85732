"""Compiling declarations into encoders and decoders: the one interpreter of the schema.

A :class:`Plan` is compiled once per (class, version, flexible): the fields present in that
version in wire order, the tagged fields, and the absent fields with their defaults. Flexible
versions switch strings, bytes and arrays to their compact forms and add a tagged-field section
to every struct (Kafka's JSON-spec rules, reference section 1.4). Nothing here knows any
particular message; ``codec.py`` holds the entry points and the error mapping.
Theory of operation. Each plan is compiled once to Python functions generated as source text
from its field list and ``exec``-ed (the technique of Kafka's own message generator and of
kafka-python; it makes this codec several times faster than calling a closure per field):

* ``write(out: bytearray, obj)`` appends the encoding of ``obj``;
* ``read_at(buf: bytes, pos, end) -> (obj, pos)`` parses one struct starting at ``pos``;
* ``read_all(buf) -> obj`` parses a whole body and rejects trailing bytes.

The ``_emit_*`` functions below are the one interpreter of the declarations: they know the wire
types and emit, per field type, the same few lines whatever the message; nothing is written per
API. Nested structs are inlined into their parent's functions; consecutive fixed-width fields
(and a classic length prefix after them) share one ``struct`` call; tagged fields go through two
shared helpers (rare on the wire); an array of structs may come as an ``EncodedArray``, whose
bytes are written as they are (preencoded.py), and ``source_writer`` writes a struct's
fields from an object holding them under other names. Reading relies on ``end == len(buf)``: a
fixed-width read past the end raises struct.error or IndexError, which the entry points turn
into DecodeError; slices, which would silently come out short, are caught by the final
position check; an array count is checked against the least its elements can take before any
element is built, so a count of 2^31-1 fails at once. Decoded instances are filled in a mutable
twin of the frozen class and then given their real class (see ``builder_twin``). Each generated line
is recorded against the field it serves (``LINE_FIELDS``, used by codec.py to name the failing
field; the source also goes to ``linecache`` so tracebacks show it); ``Plan.source`` shows what
was generated. The module being written (``Source``) and the helpers its code calls are in
``generated_source.py``.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

import attrs

from . import primitives as p
from .builder_twin import builder_twin, default_of
from .generated_source import SHORT, Source, array_structs, overrun
from .schema import (BOOL, BYTES, FLOAT64, INT8, INT16, INT32, INT64, RECORDS, STRING, UINT16,
                     UINT32, UUID, VARINT, VARLONG, Array, FieldSpec, fields_of)
from .preencoded import EncodedArray
from .spliced import RecordsParts, splice

# --- the generator -------------------------------------------------------------------------

# struct format character and size of every fixed-width type
_FIXED = {INT8: "b", INT16: "h", UINT16: "H", INT32: "i", UINT32: "I", INT64: "q",
          FLOAT64: "d", BOOL: "?", UUID: "16s"}
_FIXED_SIZE = {t: struct.calcsize(">" + c) for t, c in _FIXED.items()}

# Kafka's readers build strings with new String(bytes, UTF_8), which replaces malformed input
# with U+FFFD and never fails; so do we (a client id or group name with a stray byte is served).
_DECODE_STRING = ".decode('utf-8', 'replace')"


def _min_size(type_: Any, version: int, flexible: bool, nullable: bool) -> int:
    """The fewest bytes a value of this type can take (bounds array counts before reading)."""
    if type_ in _FIXED_SIZE:
        return _FIXED_SIZE[type_]
    if type_ is VARINT or type_ is VARLONG:
        return 1
    if type_ is STRING:
        return 1 if flexible else 2
    if type_ is BYTES or type_ is RECORDS or isinstance(type_, Array):
        return 1 if flexible else 4
    if isinstance(type_, type):
        return 1 if nullable else max(plan_for(type_, version, flexible).min_size, 1)
    raise TypeError(f"unknown wire type {type_!r}")


def _classic_prefix(t: Any, flexible: bool) -> Any:
    """The fixed-width length prefix of a variable-size type in a non-flexible version."""
    if flexible:
        return None
    if t is STRING:
        return INT16
    if t is BYTES or t is RECORDS or isinstance(t, Array):
        return INT32
    return None


# -- reading --------------------------------------------------------------------------------
# Generated read code works on the locals ``buf`` (bytes), ``pos`` and ``end`` == len(buf).

def _emit_fixed_read(src: Source, ind: int, items: list[tuple[Any, str, str | None]]) -> None:
    """Consecutive fixed-width values (fields, and classic length prefixes before them) come
    out of one unpack call; past the end it raises struct.error, which becomes DecodeError."""
    fmt = ">" + "".join(_FIXED[t] for t, _, _ in items)
    field = ",".join(dict.fromkeys(f for _, _, f in items if f)) or None
    unpack = src.const(struct.Struct(fmt).unpack_from, "_up")
    src.emit(ind, f"{', '.join(v for _, v, _ in items)}, = {unpack}(buf, pos)", field)
    src.emit(ind, f"pos += {struct.calcsize(fmt)}", field)
    for t, v, f in items:
        if t is UUID:
            src.emit(ind, f"{v} = _UUID(bytes={v})", f)


def _emit_read(src: Source, ind: int, t: Any, version: int, flexible: bool, nullable: bool,
               dst: str, field: str | None) -> None:
    """Lines that read one value of type ``t`` into ``dst`` (a local or an attribute)."""
    prefix = _classic_prefix(t, flexible)
    if t in _FIXED:
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
        src.emit(ind, f"if {n} > 127: {n}, pos = _uv(buf, pos, end); pos -= 1", field)
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
            _emit_struct_read(src, ind + 1, plan, o, f"{field}.")
        else:
            _emit_struct_read(src, ind, plan, o, f"{field}.")
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
    ``_emit_read``."""
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
    least = max(_min_size(el, version, flexible, False), 1)
    # Refuse a count the data cannot hold before building anything: a count of 2^31-1 fails
    # here, not after a long loop.
    src.emit(ind, f"if {n} * {least} > end - pos: raise _many({n}, pos, end)", field)
    if el in _FIXED and el is not UUID:
        # short arrays (replica lists, partition indexes) use a precompiled Struct per count
        unpackers = src.const(array_structs(_FIXED[el], "unpack_from"), "_ua")
        src.emit(ind, f"if {n} < {SHORT}: {dst} = [*{unpackers}[{n}](buf, pos)]", field)
        src.emit(ind, f"else: {dst} = list(_unpack_from('>%d{_FIXED[el]}' % {n}, buf, pos))",
                 field)
        src.emit(ind, f"pos += {n} * {least}", field)
        return
    lst, item = src.var("l"), src.var("it")
    src.emit(ind, f"{lst} = []", field)
    src.emit(ind, f"for _ in range({n}):", field)
    _emit_read(src, ind + 1, el, version, flexible, False, item, field)
    src.emit(ind + 1, f"{lst}.append({item})", field)
    src.emit(ind, f"{dst} = {lst}", field)


def _emit_struct_read(src: Source, ind: int, plan: "Plan", dst: str, path: str) -> None:
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
            if kind == "factory":
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
        if t in _FIXED:
            run.append((t, v, name))
            continue
        prefix = _classic_prefix(t, field_flexible)
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
        _emit_read(src, ind, t, plan.version, field_flexible, nullable, v, name)
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


# -- writing --------------------------------------------------------------------------------
# Generated write code appends to the local ``out`` (a bytearray).

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


def _emit_write(src: Source, ind: int, t: Any, version: int, flexible: bool, nullable: bool,
                expr: str, field: str | None) -> None:
    """Lines that append the encoding of the value ``expr`` (a local or attribute) to ``out``."""
    null_mark = "out.append(0)" if flexible else (
        "out += b'\\xff\\xff'" if t is STRING else "out += b'\\xff\\xff\\xff\\xff'")
    if t in _FIXED:
        pack = src.const(struct.Struct(">" + _FIXED[t]).pack, "_pk")
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
        src.emit(ind, f"{n} = len({v})", field)
        _emit_len_write(src, ind, flexible, t is not STRING, n, field)
        if t is RECORDS:
            # stored batches handed over as they are (spliced.py): placed, not copied
            parts = src.const(RecordsParts, "_rp")
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
        if el in _FIXED and el is not UUID:
            packers = src.const(array_structs(_FIXED[el], "pack"), "_pa")
            src.emit(ind, f"if {n} < {SHORT}: out += {packers}[{n}](*{v})", field)
            src.emit(ind, f"else: out += _pack('>%d{_FIXED[el]}' % {n}, *{v})", field)
        else:
            item = src.var("it")
            src.emit(ind, f"for {item} in {v}:", field)
            _emit_write(src, ind + 1, el, version, flexible, False, item, field)
    elif isinstance(t, type):
        plan = plan_for(t, version, flexible)
        if nullable:
            v = src.var("o")
            src.emit(ind, f"{v} = {expr}", field)
            src.emit(ind, f"if {v} is None: out.append(255)", field)
            src.emit(ind, "else:", field)
            src.emit(ind + 1, "out.append(1)", field)
            _emit_struct_write(src, ind + 1, plan, v, f"{field}.")
        else:
            _emit_struct_write(src, ind, plan, expr, f"{field}.")
    else:
        raise TypeError(f"unknown wire type {t!r}")


def _emit_struct_write(src: Source, ind: int, plan: "Plan", expr: str, path: str,
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
            fmt = ">" + "".join(_FIXED[s.type] for s in run)
            pack = src.const(struct.Struct(fmt).pack, "_pk")
            args = ", ".join(f"{expr}.{names.get(s.name, s.name)}"
                             f"{'.bytes' if s.type is UUID else ''}" for s in run)
            src.emit(ind, f"out += {pack}({args})", ",".join(path + s.name for s in run))
            run.clear()

    for spec, field_flexible, nullable in plan.regular:
        if spec.type in _FIXED:
            run.append(spec)
            continue
        flush()
        _emit_write(src, ind, spec.type, plan.version, field_flexible, nullable,
                    f"{expr}.{names.get(spec.name, spec.name)}", path + spec.name)
    flush()
    for spec in plan.absent:
        dflt = src.const(_default_value(spec), "_d")
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


def _standalone(name: str, t: Any, version: int, flexible: bool, nullable: bool):
    """A (write, read_at) pair for one tagged field's value."""
    src = Source(name)
    src.emit(0, "def write(out, value):")
    _emit_write(src, 1, t, version, flexible, nullable, "value", "value")
    src.emit(0, "def read_at(buf, pos, end):")
    _emit_read(src, 1, t, version, flexible, nullable, "value", "value")
    src.emit(1, "return value, pos")
    g = src.compile()
    return g["write"], g["read_at"]


class Plan:
    """The compiled encoder/decoder of one struct class at one version.

    ``regular`` holds (spec, flexible for this field, nullable) for the fields on the wire, in
    order; ``tagged`` maps tag -> spec; ``absent`` are the non-ignorable fields this version
    lacks (writing one with a non-default value is an EncodeError).

    Entry points: ``write(out, obj)``; ``read(reader)``; ``read_all(buf)`` for a whole body;
    ``read_at(buf, pos, end)``, which requires ``end == len(buf)`` and may return a position
    past the end on truncated data (callers check, as ``read`` does). DecodeError is only
    guaranteed through ``decode``/``read_from``, which also convert the struct.error,
    IndexError and UnicodeDecodeError the generated code lets through.
    """

    def __init__(self, cls: type, version: int, flexible: bool) -> None:
        self.cls = cls
        self.version = version
        self.flexible = flexible
        regular: list[tuple[FieldSpec, bool, bool]] = []
        tagged: dict[int, FieldSpec] = {}
        absent: list[FieldSpec] = []
        min_size = 1 if flexible else 0
        for spec in fields_of(cls):
            field_flexible = flexible and (spec.flexible is None or version in spec.flexible)
            nullable = version in spec.nullable
            if spec.tag is not None:
                if flexible and version in spec.tagged and version in spec.versions:
                    tagged[spec.tag] = spec
                else:
                    absent.append(spec)
            elif version in spec.versions:
                regular.append((spec, field_flexible, nullable))
                min_size += _min_size(spec.type, version, field_flexible, nullable)
            else:
                absent.append(spec)
        self.regular = tuple(regular)
        self.fields = tuple(s for s, _, _ in regular)
        self.tagged = dict(sorted(tagged.items()))
        self.absent = tuple(s for s in absent if not s.ignorable)
        self.min_size = min_size
        self._sources: dict[str, str] = {}

    # The generated parts, each made on its first use: a request body is only ever read whole
    # (``read_all``), a response only written, a header read at a position; and a nested
    # struct's own functions are never called, as its parent inlines its fields. So a serve
    # compiles what it answers with, not three functions for every struct it meets. Made by
    # cached_property, then plain instance attributes: a class with ``__getattr__`` would make
    # every ``plan.write`` / ``plan.read_all`` of the request path take CPython's unspecialised
    # attribute lookup.
    @functools.cached_property
    def write(self) -> Any:
        return self._compile("write")

    @functools.cached_property
    def read_at(self) -> Any:
        return self._compile("read_at")

    @functools.cached_property
    def read_all(self) -> Any:
        return self._compile("read_all")

    @functools.cached_property
    def tag_readers(self) -> dict[int, tuple[str, Any]]:
        self._compile_tags()
        return self.__dict__["tag_readers"]

    @functools.cached_property
    def tag_writers(self) -> tuple:
        self._compile_tags()
        return self.__dict__["tag_writers"]

    @property
    def source(self) -> str:
        """What was generated, for reading: all three functions."""
        parts = ("write", "read_at", "read_all")
        for part in parts:
            getattr(self, part)
        return "\n".join(self._sources[part] for part in parts)

    def _compile_tags(self) -> None:
        readers: dict[int, tuple[str, Any]] = {}
        writers = []
        for tag, spec in self.tagged.items():
            w, r = _standalone(f"{self.cls.__name__}.{spec.name} v{self.version} tag {tag}",
                               spec.type, self.version, self.flexible,
                               self.version in spec.nullable)
            readers[tag] = (spec.name, r)
            writers.append((tag, spec.name, _default_value(spec), w))
        # both at once (each cached_property above returns its own)
        self.__dict__["tag_readers"] = readers
        self.__dict__["tag_writers"] = tuple(writers)

    def _compile(self, name: str) -> Any:
        src = Source(f"{self.cls.__name__} v{self.version}{' flexible' if self.flexible else ''}"
                     f" {name}")
        if name == "write":
            src.emit(0, "def write(out, obj):")
            _emit_struct_write(src, 1, self, "obj", "")
            src.emit(1, "return None")
        elif name == "read_at":
            src.emit(0, "def read_at(buf, pos, end):")
            _emit_struct_read(src, 1, self, "obj", "")
            src.emit(1, "return obj, pos")
        else:  # a whole top-level body: no (obj, pos) tuple, and a trailing-bytes check
            src.emit(0, "def read_all(buf):")
            src.emit(1, "pos = 0")
            src.emit(1, "end = len(buf)")
            _emit_struct_read(src, 1, self, "obj", "")
            src.emit(1, "if pos != end: raise _overrun(pos, end)")
            src.emit(1, "return obj")
        fn = src.compile()[name]
        self._sources[name] = "\n".join(src.lines)
        return fn

    def read(self, r: p.Reader) -> Any:
        """Parse one struct from a Reader (headers, the broker, consumer_protocol use this)."""
        buf = r.buf
        if type(buf) is not bytes:
            buf = r.buf = bytes(buf)
        if r.end != len(buf):  # the generated code takes the end of the buffer as the end
            buf = buf[:r.end]
        obj, pos = self.read_at(buf, r.pos, r.end)
        if pos > r.end:
            raise overrun(pos, r.end)
        r.pos = pos
        return obj


def _default_value(spec: FieldSpec) -> Any:
    if spec.default is attrs.NOTHING:
        return shared_default(spec.type) if isinstance(spec.type, type) else spec.type()
    return spec.default


@functools.cache
def shared_default(cls: type) -> Any:
    """The one instance of the (frozen) struct ``cls`` with every field at its default, which
    the writers compare a struct-valued field to. A handler that leaves such a field at its
    default passes this very instance: the writer sees it by identity, without comparing
    fields (Fetch's three tagged structs per partition, Produce's current leader)."""
    return cls()


@functools.cache
def plan_for(cls: type, version: int, flexible: bool) -> Plan:
    return Plan(cls, version, flexible)


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
    _emit_struct_write(src, 1, plan, "obj", "", renamed)
    src.emit(1, "return None")
    return src.compile()["write"]


