"""What cannot be written raises EncodeError (a ValueError), naming the class and field.

A field the target version does not have may only hold its default, unless it is ignorable
(then it is silently dropped, as Kafka's writers do); a non-nullable field may not be None;
values must fit their wire type; the version must be one the message declares.
"""

from __future__ import annotations

import attrs
import pytest

from kafka_emu.protocol import EncodeError, encode
from kafka_emu.protocol.schema import (BOOL, FLOAT64, INT8, INT16, INT32, INT64, STRING,
                                       UINT16, UINT32, UUID, Array, fields_of)
from protocol_cases import CASES, default_of, different

# (class, version, field) for every field absent from a version
ABSENT = [(cls, v, spec) for cls, v in CASES for spec in fields_of(cls)
          if not (v in spec.versions and (spec.tag is None or (
              v in cls.__kafka__.flexible and v in spec.tagged)))]
NOT_IGNORABLE = [c for c in ABSENT if not c[2].ignorable]
IGNORABLE = [c for c in ABSENT if c[2].ignorable]


def _ids(cases):
    return [f"{c.__name__}-v{v}-{s.name}" for c, v, s in cases]


def _with(cls, spec, value):
    return cls(**{attrs.fields_dict(cls)[spec.name].alias: value})


def test_there_are_absent_fields_of_both_kinds():
    assert len(NOT_IGNORABLE) > 20 and len(IGNORABLE) > 20


@pytest.mark.parametrize("cls,version,spec", NOT_IGNORABLE, ids=_ids(NOT_IGNORABLE))
def test_non_default_value_in_a_field_the_version_lacks(cls, version, spec):
    msg = _with(cls, spec, different(spec.type, default_of(spec)))
    with pytest.raises(EncodeError, match=spec.name):
        encode(msg, version)


@pytest.mark.parametrize("cls,version,spec", IGNORABLE, ids=_ids(IGNORABLE))
def test_ignorable_field_the_version_lacks_is_dropped(cls, version, spec):
    msg = _with(cls, spec, different(spec.type, default_of(spec)))
    assert encode(msg, version) == encode(cls(), version)


# (class, version, field) for every regular, non-nullable string/bytes/array/struct field
NON_NULLABLE = [(cls, v, spec) for cls, v in CASES for spec in fields_of(cls)
                if spec.tag is None and v in spec.versions and v not in spec.nullable
                and (spec.type in (STRING,) or isinstance(spec.type, (Array, type))
                     or spec.type.name == "bytes")]


@pytest.mark.parametrize("cls,version,spec", NON_NULLABLE, ids=_ids(NON_NULLABLE))
def test_none_where_the_version_forbids_null(cls, version, spec):
    with pytest.raises(EncodeError, match=spec.name):
        encode(_with(cls, spec, None), version)


_LIMITS = {INT8: 2**7, INT16: 2**15, INT32: 2**31, INT64: 2**63, UINT16: 2**16,
           UINT32: 2**32}
INTS = [(cls, v, spec) for cls, v in CASES for spec in fields_of(cls)
        if spec.tag is None and v in spec.versions and spec.type in _LIMITS]


@pytest.mark.parametrize("cls,version,spec", INTS[::7], ids=_ids(INTS[::7]))
def test_integers_must_fit_their_type(cls, version, spec):
    limit = _LIMITS[spec.type]
    low = 0 if spec.type in (UINT16, UINT32) else -limit
    for bad in (limit, low - 1, "7", 1.5):
        with pytest.raises(EncodeError, match=spec.name):
            encode(_with(cls, spec, bad), version)


def test_wrong_value_types_name_the_field():
    cls, version, spec = next(c for c in NON_NULLABLE if c[2].type is STRING)
    with pytest.raises(EncodeError, match=spec.name):
        encode(_with(cls, spec, b"bytes, not str"), version)


def test_classic_string_longer_than_int16():
    cls, version, spec = next(c for c in NON_NULLABLE
                              if c[2].type is STRING and c[1] not in c[0].__kafka__.flexible)
    with pytest.raises(EncodeError, match="int16"):
        encode(_with(cls, spec, "x" * 32768), version)
    encode(_with(cls, spec, "x" * 32767), version)


def test_version_not_declared():
    cls = CASES[0][0]
    with pytest.raises(EncodeError, match="no version"):
        encode(cls(), cls.__kafka__.valid.hi + 1)
    assert issubclass(EncodeError, ValueError)


BOOLS_FLOATS_UUIDS = [(cls, v, spec) for cls, v in CASES for spec in fields_of(cls)
                      if spec.tag is None and v in spec.versions
                      and spec.type in (BOOL, FLOAT64, UUID)]


@pytest.mark.parametrize("cls,version,spec", BOOLS_FLOATS_UUIDS[::5],
                         ids=_ids(BOOLS_FLOATS_UUIDS[::5]))
def test_bool_float_uuid_fields_reject_other_types(cls, version, spec):
    bad = {BOOL: None, FLOAT64: "1.0", UUID: "not a uuid"}[spec.type]
    with pytest.raises(EncodeError, match=spec.name):
        encode(_with(cls, spec, bad), version)
