"""A bridge to kafka-python's protocol classes, the independent implementation we check against.

kafka-python 3.x generates its message classes from Kafka's own JSON schemas (vendored in
``kafka/protocol/schemas/resources``, Kafka 4.3). Nothing here is written per API: their class
is found by api key and kind, and fields are paired by wire position (regular fields, in the
version's wire order) and by tag number (tagged fields). Names must agree too, compared without
underscores and case (theirs come from the JSON names, ours are snake_case of the same names);
a few of their classes rename a field in a ``json_patch`` (``authorized_operations`` for
``cluster_authorized_operations``), so a name that is a suffix of the other is accepted.

Values are converted generically: their zero UUID is ``None``; their patched ``bitfield`` type
(a set of bit numbers, ``None`` for "not requested") is our int32.
"""

from __future__ import annotations

import importlib
import pkgutil
import uuid
from typing import Any

import attrs

import kafka.protocol as kp
from kafka.protocol.api_data import ApiData
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs.types import BitField
from kafka_emu.protocol.codec import plan_for
from kafka_emu.protocol.schema import (BOOL, BYTES, FLOAT64, INT8, INT16, INT32, INT64, RECORDS,
                                       STRING, UINT16, UINT32, UUID, Array)

ZERO_UUID = uuid.UUID(int=0)

_TYPE_NAMES = {INT8: "int8", INT16: "int16", UINT16: "uint16", INT32: "int32", UINT32: "uint32",
               INT64: "int64", FLOAT64: "float64", BOOL: "bool", UUID: "uuid",
               STRING: "string", BYTES: "bytes", RECORDS: "records"}


def _load_all() -> None:
    for mod in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
        if ".schemas" in mod.name or mod.name.endswith("generate_stubs"):
            continue
        importlib.import_module(mod.name)


def _subclasses(cls: type):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _index() -> tuple[dict[tuple[int, str], type], dict[str, type]]:
    _load_all()
    messages, data = {}, {}
    for cls in _subclasses(ApiMessage):
        if cls.__dict__.get("_class_version", None) is None and cls.__dict__.get("_json"):
            messages[(cls.API_KEY, cls.type)] = cls
    for cls in _subclasses(ApiData):
        if cls.__dict__.get("_json"):
            data[cls.__name__] = cls
    return messages, data


KP_MESSAGES, KP_DATA = _index()


def kp_class(cls: type) -> type | None:
    """kafka-python's class for one of our declared messages, or None if it has none."""
    info = cls.__kafka__
    if info.kind == "data":
        return KP_DATA.get(cls.__name__)
    return KP_MESSAGES.get((info.api_key, info.kind))


def kp_versions(kcls: type) -> range:
    lo, hi = kcls._valid_versions
    return range(lo, hi + 1)


def kp_flexible(kcls: type, version: int) -> bool:
    return kcls.flexible_version_q(version)


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def names_match(ours: str, theirs: str) -> bool:
    a, b = _norm(ours), _norm(theirs)
    return a == b or a.endswith(b) or b.endswith(a)


@attrs.frozen
class Pair:
    ours: Any  # FieldSpec
    theirs: Any  # kafka-python field
    flexible: bool  # our field's encoding is compact


def pair_fields(cls: type, kstruct: Any, version: int, flexible: bool) -> list[Pair]:
    """Our present fields paired with theirs; AssertionError naming the difference if the
    two do not describe the same wire layout."""
    plan = plan_for(cls, version, flexible)
    theirs = list(kstruct.untagged_fields(version))
    ours = list(plan.regular)
    where = f"{cls.__name__} v{version}"
    assert len(ours) == len(theirs), (
        f"{where}: fields on the wire differ:\n  ours   {[s.name for s, _, _ in ours]}\n"
        f"  theirs {[f.name for f in theirs]}")
    pairs = []
    for (spec, field_flexible, _), f in zip(ours, theirs):
        assert names_match(spec.name, f.name), (
            f"{where}: wire position of {spec.name!r} holds {f.name!r} in Kafka's schema:\n"
            f"  ours   {[s.name for s, _, _ in ours]}\n  theirs {[x.name for x in theirs]}")
        pairs.append(Pair(spec, f, field_flexible))
    if flexible:
        their_tags = {f.tag: f for f in kstruct.tagged_fields(version)._fields}
        assert set(plan.tagged) == set(their_tags), (
            f"{where}: tagged fields differ: ours {sorted(plan.tagged)}, theirs "
            f"{sorted(their_tags)} ({[f.name for f in their_tags.values()]})")
        for tag, spec in plan.tagged.items():
            f = their_tags[tag]
            assert names_match(spec.name, f.name), f"{where}: tag {tag} is {spec.name} vs {f.name}"
            pairs.append(Pair(spec, f, flexible))
    return pairs


def _elem_struct(kfield: Any) -> Any:
    return kfield.array_of if kfield.is_struct_array() else kfield


def layout_differences(cls: type, kstruct: Any, version: int, flexible: bool,
                       path: str = "") -> list[str]:
    """Every difference of wire layout (order, names, types, nullability, tags), recursively."""
    try:
        pairs = pair_fields(cls, kstruct, version, flexible)
    except AssertionError as exc:
        return [f"{path}{exc}"]
    problems = []
    for pair in pairs:
        spec, f = pair.ours, pair.theirs
        where = f"{path}{cls.__name__}.{spec.name} v{version}"
        t = spec.type
        ours_nullable = version in spec.nullable or t is RECORDS
        theirs_nullable = f.nullable_for_version_q(version) or (
            f.type_str == "records" and t is RECORDS)
        if ours_nullable != theirs_nullable:
            problems.append(f"{where}: nullable ours={ours_nullable} theirs={theirs_nullable}")
        if isinstance(t, Array):
            if not f.type_str.startswith("[]") and not f.is_struct_array():
                problems.append(f"{where}: ours is an array, theirs {f.type_str}")
                continue
            el = t.element
            if isinstance(el, type) and not isinstance(el, Array):
                if not f.is_struct_array():
                    problems.append(f"{where}: ours is an array of structs, theirs {f.type_str}")
                    continue
                problems += layout_differences(el, f.array_of, version, pair.flexible,
                                               f"{path}{spec.name}[].")
            elif f.is_struct_array() or _TYPE_NAMES.get(el) != f.array_of.type_str:
                problems.append(f"{where}: element type ours {el!r} theirs {f.type_str}")
        elif isinstance(t, type):
            if not f.is_struct():
                problems.append(f"{where}: ours is a struct, theirs {f.type_str}")
                continue
            problems += layout_differences(t, f, version, pair.flexible, f"{path}{spec.name}.")
        else:
            theirs_type = f.type_str
            if theirs_type == "bitfield":  # their json_patch of an int32 field
                theirs_type = "int32"
            if _TYPE_NAMES.get(t) != theirs_type:
                problems.append(f"{where}: type ours {t!r} theirs {f.type_str}")
    return problems


# --- values ---------------------------------------------------------------------------------

def _bits_to_int(vals: Any) -> int:
    if vals is None:
        vals = {31}
    n = BitField.to_32_bit_field(vals)
    return n - (1 << 32) if n >= 1 << 31 else n


def _int_to_bits(n: int) -> Any:
    vals = BitField.from_32_bit_field(n & 0xFFFFFFFF)
    return None if vals == {31} else vals


def to_kp(obj: Any, cls: type, kstruct: Any, version: int, flexible: bool,
          top: type | None = None) -> Any:
    """Their object with our object's values (``top`` is their message class, for the root)."""
    kw = {}
    for pair in pair_fields(cls, kstruct, version, flexible):
        kw[pair.theirs.name] = _value_to_kp(getattr(obj, pair.ours.name), pair, version)
    if top is not None:
        return top(version=version, **kw)
    return kstruct.data_class(**kw)


def _value_to_kp(value: Any, pair: Pair, version: int) -> Any:
    t, f = pair.ours.type, pair.theirs
    if value is None:
        return None
    if t is UUID and value == ZERO_UUID:
        return None  # their zero UUID (written as a tagged field only when it is not zero)
    if f.type_str == "bitfield":
        return _int_to_bits(value)
    if isinstance(t, Array):
        el = t.element
        if isinstance(el, type) and not isinstance(el, Array):
            return [to_kp(item, el, f.array_of, version, pair.flexible) for item in value]
        return list(value)
    if isinstance(t, type):
        if pair.ours.tag is not None and value == t():
            return None  # their "absent" tagged struct (ours: the all-defaults struct)
        return to_kp(value, t, f, version, pair.flexible)
    return value


def differences(ours: Any, theirs: Any, cls: type, kstruct: Any, version: int, flexible: bool,
                path: str = "") -> list[str]:
    """Field-by-field (recursive) differences between our object and theirs."""
    problems = []
    for pair in pair_fields(cls, kstruct, version, flexible):
        spec, f = pair.ours, pair.theirs
        where = f"{path}{spec.name}"
        a, b = getattr(ours, spec.name), getattr(theirs, f.name)
        t = spec.type
        if f.type_str == "bitfield":
            b = _bits_to_int(b)
        if t is UUID:
            b = ZERO_UUID if b is None else b
        if isinstance(b, memoryview):
            b = bytes(b)
        if b is None and isinstance(t, type) and version not in spec.nullable:
            # their absent tagged struct is None; ours (like Kafka's Java) is the struct with
            # all defaults, written only when it differs from that
            b = t()
            problems += [] if a == b else [f"{where}: ours {a!r} theirs absent"]
            continue
        if a is None or b is None:
            if a is not b:
                problems.append(f"{where}: ours {a!r} theirs {b!r}")
            continue
        if isinstance(t, Array) and isinstance(t.element, type) and not isinstance(
                t.element, Array):
            if len(a) != len(b):
                problems.append(f"{where}: {len(a)} elements, theirs {len(b)}")
                continue
            for i, (x, y) in enumerate(zip(a, b)):
                problems += differences(x, y, t.element, f.array_of, version, pair.flexible,
                                        f"{where}[{i}].")
        elif isinstance(t, type) and not isinstance(t, Array):
            problems += differences(a, b, t, f, version, pair.flexible, f"{where}.")
        elif isinstance(t, Array) and t.element is UUID:
            b = [ZERO_UUID if x is None else x for x in b]
            if list(a) != list(b):
                problems.append(f"{where}: ours {a!r} theirs {b!r}")
        elif (list(a) if isinstance(t, Array) else a) != (list(b) if isinstance(t, Array) else b):
            problems.append(f"{where}: ours {a!r} theirs {b!r}")
    return problems


# --- their codec ----------------------------------------------------------------------------

def kp_encode(kobj: Any, version: int) -> bytes:
    if isinstance(kobj, ApiData):
        return kobj.encode(version=version, header=False)
    # ApiMessage.encode itself: some subclasses rewrite fields in their encode (kafka-python
    # client conveniences), which is not what is being compared
    return bytes(ApiMessage.encode(kobj, version=version))


def kp_decode(kcls: type, version: int, data: bytes) -> Any:
    if issubclass(kcls, ApiData):
        return kcls.decode(data, version=version, header=False)
    # ApiMessage.decode itself: ApiVersionsResponse.decode reads any errored body as v0 (a
    # client-side recovery rule), which is not what is being compared
    return ApiMessage.decode.__func__(kcls, data, version=version)


# --- kafka-python's older hand-written Struct classes (kafka.protocol.old) -------------------
# They still describe versions that Kafka 4.3's JSON schemas dropped (OffsetCommit v0-1,
# OffsetFetch v0, CreateTopics v0-1, DeleteTopics v0, ...), so they cross-check the versions the
# generated classes cannot. A Struct is positional: values in schema order, arrays of structs
# as lists of tuples; names are compared as above.

def _old_index() -> dict[tuple[int, int, str], type]:
    from kafka.protocol.old.struct import Struct
    import kafka.protocol.old as old
    found = {}
    for mod in pkgutil.iter_modules(old.__path__, "kafka.protocol.old."):
        module = importlib.import_module(mod.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Struct)
                    and isinstance(getattr(value, "API_KEY", None), int)
                    and isinstance(getattr(value, "API_VERSION", None), int)):
                kind = "request" if "Request" in value.__name__ else "response"
                found.setdefault((value.API_KEY, value.API_VERSION, kind), value)
    return found


OLD = _old_index()


def old_class(cls: type, version: int) -> type | None:
    info = cls.__kafka__
    return OLD.get((info.api_key, version, info.kind))


def old_layout_differences(cls: type, schema: Any, version: int, path: str = "") -> list[str]:
    """Names and nesting of our fields at ``version`` against an old positional Schema."""
    from kafka.protocol.old.types import Array as OldArray, Schema as OldSchema
    plan = plan_for(cls, version, False)
    ours = [s for s, _, _ in plan.regular]
    names = list(schema.names)
    if len(ours) != len(names) or not all(names_match(s.name, n) for s, n in zip(ours, names)):
        return [f"{path}{cls.__name__} v{version}: ours {[s.name for s in ours]} theirs {names}"]
    problems = []
    for spec, their in zip(ours, schema.fields):
        t = spec.type
        inner = getattr(their, "array_of", None) if isinstance(their, OldArray) else their
        if isinstance(t, Array) and isinstance(t.element, type):
            if not isinstance(inner, OldSchema):
                problems.append(f"{path}{spec.name}: ours an array of structs, theirs {their!r}")
                continue
            problems += old_layout_differences(t.element, inner, version,
                                               f"{path}{spec.name}[].")
    return problems


def to_old(obj: Any, cls: type, version: int) -> tuple:
    values = []
    for spec, _, _ in plan_for(cls, version, False).regular:
        value, t = getattr(obj, spec.name), spec.type
        if value is not None and isinstance(t, Array) and isinstance(t.element, type):
            value = [to_old(item, t.element, version) for item in value]
        elif value is not None and isinstance(t, type) and not isinstance(t, Array):
            value = to_old(value, t, version)
        values.append(value)
    return tuple(values)


def old_values(kobj: Any) -> tuple:
    return tuple(getattr(kobj, name) for name in kobj.SCHEMA.names)
