"""Hypothesis strategies built from the message declarations (reusable by users' tests).

``messages(cls, version)`` generates valid instances of any ``@message`` class (request,
response, header or embedded ``kind="data"`` schema) for one of its versions:

* fields the version does not have keep their declared defaults (so the message encodes at that
  version without an EncodeError);
* ``None`` appears only where the version allows null (nullable strings, bytes, arrays and
  structs; RECORDS are always nullable);
* integers span their wire type (int8 ... int64, uint16/uint32, varint/varlong), strings are
  short Unicode text without surrogates (UTF-8, as Kafka writes), bytes and arrays are short so
  that nested messages stay small;
* tagged fields are generated only in the versions where they are tagged.

``messages(cls, version, text=...)`` draws every string from ``text`` instead: names from a small
pool (the topics and groups a server knows) get requests past the "unknown topic" and "unknown
group" answers into the handlers' deeper paths.

The field facts come from :func:`kafka_emu.protocol.schema.fields_of`, the same declarations
the codec reads; nothing here knows a particular API. No trio, no I/O.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

import attrs
from hypothesis import strategies as st

from kafka_emu.protocol.schema import (BOOL, BYTES, FLOAT64, INT8, INT16, INT32, INT64, RECORDS,
                                       STRING, UINT16, UINT32, UUID, VARINT, VARLONG, Array,
                                       FieldSpec, fields_of, info)

__all__ = ["messages", "present_fields", "value_of"]

# (min, max) of every integer wire type
_INT_RANGES = {
    INT8: (-(2**7), 2**7 - 1),
    INT16: (-(2**15), 2**15 - 1),
    UINT16: (0, 2**16 - 1),
    INT32: (-(2**31), 2**31 - 1),
    UINT32: (0, 2**32 - 1),
    INT64: (-(2**63), 2**63 - 1),
    VARINT: (-(2**31), 2**31 - 1),
    VARLONG: (-(2**63), 2**63 - 1),
}

MAX_TEXT = 12  # characters; at most 4 UTF-8 bytes each, far below the int16 string limit
MAX_BYTES = 24
MAX_ITEMS = 3  # array elements: nested arrays multiply


def present_fields(cls: type, version: int, flexible: bool) -> list[FieldSpec]:
    """The fields of a struct that are on the wire at ``version`` (regular and tagged)."""
    present = []
    for spec in fields_of(cls):
        if version not in spec.versions:
            continue
        if spec.tag is not None and not (flexible and version in spec.tagged):
            continue
        present.append(spec)
    return present


def _ints(type_: Any) -> st.SearchStrategy[int]:
    lo, hi = _INT_RANGES[type_]
    # the edges and small values are where codecs break; plain integers() finds them too,
    # but not often enough within a modest example budget
    return st.one_of(st.sampled_from(sorted({lo, hi, 0, -1 if lo < 0 else 1, 1})),
                     st.integers(lo, hi))


_TEXT = st.one_of(st.sampled_from(["", "consumer", "range", "group-1", "ünïcödé-✓"]),
                  st.text(max_size=MAX_TEXT))
_BYTES = st.binary(max_size=MAX_BYTES)
_UUIDS = st.one_of(st.just(uuid.UUID(int=0)), st.uuids())


def value_of(type_: Any, version: int, flexible: bool, nullable: bool,
             text: st.SearchStrategy = _TEXT) -> st.SearchStrategy:
    """Values of one wire type (an element type, or a whole field's type) at a version."""
    base = _base(type_, version, flexible, text)
    if nullable or type_ is RECORDS:
        return st.one_of(st.none(), base)
    return base


def _base(type_: Any, version: int, flexible: bool, text: st.SearchStrategy) -> st.SearchStrategy:
    if type_ in _INT_RANGES:
        return _ints(type_)
    if type_ is BOOL:
        return st.booleans()
    if type_ is FLOAT64:
        return st.floats(allow_nan=False)
    if type_ is UUID:
        return _UUIDS
    if type_ is STRING:
        return text
    if type_ is BYTES or type_ is RECORDS:
        return _BYTES
    if isinstance(type_, Array):
        return st.lists(value_of(type_.element, version, flexible, False, text),
                        max_size=MAX_ITEMS)
    if isinstance(type_, type):
        return _structs(type_, version, flexible, text)
    raise TypeError(f"unknown wire type {type_!r}")


@functools.cache
def _structs(cls: type, version: int, flexible: bool, text: st.SearchStrategy) -> st.SearchStrategy:
    aliases = {a.name: a.alias for a in attrs.fields(cls)}
    fields = {}
    for spec in present_fields(cls, version, flexible):
        field_flexible = flexible and (spec.flexible is None or version in spec.flexible)
        fields[aliases[spec.name]] = value_of(spec.type, version, field_flexible,
                                              version in spec.nullable, text)
    return st.fixed_dictionaries(fields).map(lambda kw: cls(**kw))


def messages(cls: type, version: int, *,
             text: st.SearchStrategy | None = None) -> st.SearchStrategy:
    """Valid instances of a declared message class at ``version`` (which must be valid); every
    string drawn from ``text`` when given."""
    declared = info(cls)
    if version not in declared.valid:
        raise ValueError(f"{cls.__name__} has no version {version} (valid {declared.valid})")
    return _structs(cls, version, version in declared.flexible, _TEXT if text is None else text)
