"""The one codec: every message, every version, driven only by the declarations.

``encode(msg, version)`` and ``decode(cls, version, data)`` compile, once per (class, version,
flexible), a plan: the ordered (attribute, writer, reader) triples of the fields present in that
version, the tagged fields, and the absent fields with their defaults. Flexible versions switch
strings, bytes and arrays to their compact forms and add a tagged-field section to every struct
(Kafka's JSON-spec rules, reference section 1.4). Nothing here knows any particular message.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from . import primitives as p
from .errors import DecodeError, EncodeError
from .schema import (BOOL, BYTES, FLOAT64, INT8, INT16, INT32, INT64, RECORDS, STRING, UINT16,
                     UINT32, UUID, VARINT, VARLONG, Array, FieldSpec, fields_of)

_FIXED = {
    INT8: (p.write_int8, p.read_int8, 1),
    INT16: (p.write_int16, p.read_int16, 2),
    UINT16: (p.write_uint16, p.read_uint16, 2),
    INT32: (p.write_int32, p.read_int32, 4),
    UINT32: (p.write_uint32, p.read_uint32, 4),
    INT64: (p.write_int64, p.read_int64, 8),
    FLOAT64: (p.write_float64, p.read_float64, 8),
    BOOL: (p.write_bool, p.read_bool, 1),
    UUID: (p.write_uuid, p.read_uuid, 16),
    VARINT: (p.write_varint, p.read_varint, 1),
    VARLONG: (p.write_varlong, p.read_varlong, 1),
}


@functools.cache
def _string(flexible: bool, nullable: bool):
    if flexible:
        return p.string_codec(p.read_compact_len, p.write_compact_len, nullable)
    return p.string_codec(p.read_len16, p.write_len16, nullable)


@functools.cache
def _bytes(flexible: bool, nullable: bool):
    if flexible:
        return p.bytes_codec(p.read_compact_len, p.write_compact_len, nullable)
    return p.bytes_codec(p.read_len32, p.write_len32, nullable)


def _array(elem_write, elem_read, min_size: int, flexible: bool, nullable: bool):
    read_len = p.read_compact_len if flexible else p.read_len32
    write_len = p.write_compact_len if flexible else p.write_len32

    def read(r: p.Reader):
        start = r.pos
        n = read_len(r)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise DecodeError("null array where the version forbids null" if n == -1
                              else f"negative array length {n}", offset=start)
        # Every element takes at least min_size bytes: refuse a count the data cannot hold
        # before building anything (a 2^31-1 count must fail here, not after a huge loop).
        if n * min_size > r.end - r.pos:
            raise DecodeError(f"array of {n} elements cannot fit in {r.end - r.pos} bytes",
                              offset=start)
        return [elem_read(r) for _ in range(n)]

    def write(out: bytearray, value) -> None:
        if value is None:
            if not nullable:
                raise ValueError("null array where the version forbids null")
            write_len(out, -1)
            return
        write_len(out, len(value))
        for item in value:
            elem_write(out, item)

    return write, read


def _codec_for(type_: Any, version: int, flexible: bool, nullable: bool):
    """(writer, reader, minimum encoded size) for one field type at one version."""
    fixed = _FIXED.get(type_) if not isinstance(type_, (Array, type)) else None
    if fixed is not None:
        return fixed
    if type_ is STRING:
        return (*_string(flexible, nullable), 1)
    if type_ is BYTES or type_ is RECORDS:
        return (*_bytes(flexible, nullable or type_ is RECORDS), 1)
    if isinstance(type_, Array):
        ew, er, emin = _codec_for(type_.element, version, flexible, False)
        return (*_array(ew, er, max(emin, 1), flexible, nullable), 1)
    if isinstance(type_, type):
        plan = plan_for(type_, version, flexible)
        if nullable:
            return (*_nullable_struct(plan), 1)
        return plan.write, plan.read, max(plan.min_size, 1)
    raise TypeError(f"unknown wire type {type_!r}")


def _nullable_struct(plan: "Plan"):
    # Kafka writes a nullable struct as an int8 marker (-1 null, 1 present) before the fields.
    def read(r: p.Reader):
        if p.read_int8(r) < 0:
            return None
        return plan.read(r)

    def write(out: bytearray, value) -> None:
        if value is None:
            out.append(0xFF)
            return
        out.append(1)
        plan.write(out, value)

    return write, read


class Plan:
    """The compiled encoder/decoder of one struct class at one version."""

    def __init__(self, cls: type, version: int, flexible: bool) -> None:
        self.cls = cls
        self.version = version
        self.flexible = flexible
        regular: list[tuple[str, Any, Any]] = []
        tagged: dict[int, tuple[FieldSpec, Any, Any]] = {}
        absent: list[FieldSpec] = []
        min_size = 0
        for spec in fields_of(cls):
            field_flexible = flexible and (spec.flexible is None or version in spec.flexible)
            nullable = version in spec.nullable
            if spec.tag is not None and flexible and version in spec.tagged:
                w, r, _ = _codec_for(spec.type, version, field_flexible, nullable)
                tagged[spec.tag] = (spec, w, r)
            elif spec.tag is None and version in spec.versions:
                w, r, size = _codec_for(spec.type, version, field_flexible, nullable)
                regular.append((spec.name, w, r))
                min_size += size
            else:
                absent.append(spec)
        self.regular = tuple(regular)
        self.readers = tuple((name, r) for name, _, r in regular)
        self.writers = tuple((name, w) for name, w, _ in regular)
        self.tagged = dict(sorted(tagged.items()))
        self.absent = tuple(s for s in absent if not s.ignorable)
        self.min_size = min_size + (1 if flexible else 0)

    # -- encode ---------------------------------------------------------------------------
    def write(self, out: bytearray, obj: Any) -> None:
        for name, w in self.writers:
            try:
                w(out, getattr(obj, name))
            except EncodeError:
                raise
            except (ValueError, TypeError, AttributeError, OverflowError) as exc:
                raise EncodeError(f"{self.cls.__name__}.{name} v{self.version}: {exc}") from None
        for spec in self.absent:
            if not _is_default(spec, getattr(obj, spec.name)):
                raise EncodeError(f"{self.cls.__name__}.{spec.name} does not exist in "
                                  f"v{self.version} and is not ignorable, but is set")
        if self.flexible:
            self._write_tags(out, obj)

    def _write_tags(self, out: bytearray, obj: Any) -> None:
        present = []
        for tag, (spec, w, _) in self.tagged.items():
            value = getattr(obj, spec.name)
            if not _is_default(spec, value):
                present.append((tag, w, value))
        p.write_uvarint(out, len(present))
        for tag, w, value in present:
            body = bytearray()
            w(body, value)
            p.write_uvarint(out, tag)
            p.write_uvarint(out, len(body))
            out += body

    # -- decode ---------------------------------------------------------------------------
    def read(self, r: p.Reader) -> Any:
        values = {name: rd(r) for name, rd in self.readers}
        if self.flexible:
            self._read_tags(r, values)
        return self.cls(**values)

    def _read_tags(self, r: p.Reader, values: dict) -> None:
        count = p.read_uvarint(r)
        last = -1
        for _ in range(count):
            start = r.pos
            tag = p.read_uvarint(r)
            if tag <= last:
                raise DecodeError(f"tag {tag} out of order after {last}", offset=start)
            last = tag
            size = p.read_uvarint(r)
            end = r.pos + size
            if end > r.end:
                raise DecodeError(f"tagged field {tag} of {size} bytes overruns", offset=start)
            known = self.tagged.get(tag)
            if known is not None:
                spec, _, rd = known
                sub = p.Reader(r.buf, r.pos, end)
                values[spec.name] = rd(sub)
                if sub.pos != end:
                    raise DecodeError(f"tagged field {tag} has {end - sub.pos} stray bytes",
                                      offset=sub.pos)
            r.pos = end  # unknown tags are skipped


def _is_default(spec: FieldSpec, value: Any) -> bool:
    if spec.default is attrs.NOTHING:
        return value == spec.type()
    return value == spec.default


@functools.cache
def plan_for(cls: type, version: int, flexible: bool) -> Plan:
    return Plan(cls, version, flexible)


def _top_plan(cls: type, version: int) -> Plan:
    info = cls.__kafka__
    if version not in info.valid:
        raise EncodeError(f"{cls.__name__} has no version {version} (valid {info.valid})")
    return plan_for(cls, version, version in info.flexible)


def encode(msg: Any, version: int) -> bytes:
    """The body bytes of a declared message at ``version``."""
    out = bytearray()
    _top_plan(type(msg), version).write(out, msg)
    return bytes(out)


def encode_into(out: bytearray, msg: Any, version: int) -> None:
    _top_plan(type(msg), version).write(out, msg)


def decode(cls: type, version: int, data: bytes, *, allow_trailing: bool = False) -> Any:
    """Parse a whole body; anything malformed raises DecodeError naming api, version, offset."""
    r = p.Reader(data)
    try:
        msg = read_from(cls, version, r)
        if r.pos != r.end and not allow_trailing:
            raise DecodeError(f"{r.end - r.pos} trailing bytes", offset=r.pos)
    except DecodeError as exc:
        raise exc.located(cls.__name__, version) from None
    return msg


def read_from(cls: type, version: int, r: p.Reader) -> Any:
    """Parse one message from a reader positioned at its start (headers use this)."""
    info = cls.__kafka__
    if version not in info.valid:
        raise DecodeError(f"unsupported version (valid {info.valid})", offset=r.pos,
                          api=cls.__name__, version=version)
    try:
        return plan_for(cls, version, version in info.flexible).read(r)
    except DecodeError as exc:
        raise exc.located(cls.__name__, version) from None
    except (ValueError, TypeError, OverflowError, MemoryError, RecursionError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}", offset=r.pos, api=cls.__name__,
                          version=version) from None
