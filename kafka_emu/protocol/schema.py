"""How messages are declared: attrs classes whose fields carry their wire facts.

A message module writes, for each request and response, one attrs class::

    @message(api_key=12, kind="response", valid="0-4", flexible="4+")
    class HeartbeatResponse:
        throttle_time_ms: int = field(INT32, "1+", ignorable=True)
        error_code: int = field(INT16, "0+")

``field`` records the type, the versions the field exists in, the versions it may be null in,
its default, whether a writer may drop it silently (``ignorable``), and for tagged fields the tag
and tagged versions. Nested structs are plain ``@struct`` classes; they take the flexibility of
the message they sit in. The codec reads these facts and nothing else.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

if TYPE_CHECKING:  # every checker knows typing_extensions, whatever Python it checks for
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10 at run time: the marker is only for checkers, so a no-op does
    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorator: decorator

from ..frozen import fast_init, lazy_dunders
from .versions import NONE, Versions, versions


class Type:
    """A wire type token; the codec maps it to concrete read/write functions."""

    def __init__(self, name: str, zero: Any) -> None:
        self.name = name
        self.zero = zero

    def __repr__(self) -> str:
        return self.name


INT8 = Type("int8", 0)
INT16 = Type("int16", 0)
UINT16 = Type("uint16", 0)
INT32 = Type("int32", 0)
UINT32 = Type("uint32", 0)
INT64 = Type("int64", 0)
FLOAT64 = Type("float64", 0.0)
BOOL = Type("bool", False)
UUID = Type("uuid", uuid.UUID(int=0))
STRING = Type("string", "")
BYTES = Type("bytes", b"")
RECORDS = Type("records", None)  # opaque record batches; nullable bytes on the wire
VARINT = Type("varint", 0)
VARLONG = Type("varlong", 0)


class Array:
    """``[]T``: an array of a primitive type token or of a struct class."""

    def __init__(self, element: "Type | type") -> None:
        self.element = element

    def __repr__(self) -> str:
        return f"[]{getattr(self.element, '__name__', self.element)}"


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class FieldSpec:
    name: str  # the attrs attribute name
    type: Any
    versions: Versions
    nullable: Versions
    default: Any
    ignorable: bool
    tag: int | None
    tagged: Versions
    flexible: Versions | None  # a per-field override, e.g. RequestHeader.ClientId ("none")


_SPEC = "kafka_emu.spec"
_NULL = object()


def field(type_: Any, versions_: str, *, nullable: str | None = None, default: Any = _NULL,
          ignorable: bool = False, tag: int | None = None, tagged: str | None = None,
          flexible: str | None = None) -> Any:
    """Declare one wire field. ``default=None`` is Kafka's ``"default": "null"``."""
    if default is _NULL:
        default_value, factory = _zero(type_)
    else:
        default_value, factory = default, None
    meta = {_SPEC: dict(type=type_, versions=versions(versions_), nullable=versions(nullable),
                        default=default_value, ignorable=ignorable, tag=tag,
                        tagged=versions(tagged) if tag is not None else NONE,
                        flexible=None if flexible is None else versions(flexible))}
    if factory is not None:
        return attrs.field(factory=factory, metadata=meta)
    return attrs.field(default=default_value, metadata=meta)


def _zero(type_: Any) -> tuple[Any, Any]:
    if isinstance(type_, Array):
        return [], list
    if isinstance(type_, Type):
        return type_.zero, None
    # a nested struct field: defaults to the struct with all defaults
    return None, type_


_C = TypeVar("_C", bound=type)


# Type checkers see the declarations as what they are, frozen keyword-only classes. ``field(...)``
# is deliberately not named a field specifier: every wire field has a default (its zero), and the
# right-hand side of each declaration is that default as far as a checker is concerned.
@dataclass_transform(kw_only_default=True, frozen_default=True)
def struct(cls: _C) -> _C:
    """Make an attrs class of a nested struct declaration (with the cheaper frozen __init__ of
    kafka_emu/frozen.py: handlers build responses on every request; and its __repr__, __eq__
    and __hash__ made on first use: a module of declarations imports sooner)."""
    return fast_init(lazy_dunders(attrs.frozen(kw_only=True, repr=False, eq=False)(cls)))


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class MessageInfo:
    api_key: int
    kind: str  # "request" | "response" | "data" (embedded schemas like the consumer protocol)
    valid: Versions
    flexible: Versions


@dataclass_transform(kw_only_default=True, frozen_default=True)
def message(*, api_key: int, kind: str, valid: str,
            flexible: str = "none") -> Callable[[_C], _C]:
    """Declare a request, response or embedded schema (``kind``) of API ``api_key``."""
    def wrap(cls: _C) -> _C:
        cls = struct(cls)
        setattr(cls, "__kafka__", MessageInfo(api_key, kind, versions(valid), versions(flexible)))
        return cls
    return wrap


def fields_of(cls: type) -> tuple[FieldSpec, ...]:
    """The declared wire fields of a message or struct class, in wire order."""
    cached: tuple[FieldSpec, ...] | None = cls.__dict__.get("__kafka_fields__")
    if cached is not None:
        return cached
    specs = []
    for a in attrs.fields(cls):
        meta = a.metadata.get(_SPEC)
        if meta is None:
            continue
        default = meta["default"]
        if default is None and not isinstance(meta["type"], (Type, Array)):
            default = attrs.NOTHING  # struct-valued: compared against a fresh default instance
        specs.append(FieldSpec(name=a.name, **{**meta, "default": default}))
    result = tuple(specs)
    setattr(cls, "__kafka_fields__", result)
    return result


def info(cls: type) -> MessageInfo:
    """The API key, kind and version ranges ``@message`` recorded on ``cls``."""
    found: MessageInfo = getattr(cls, "__kafka__")
    return found


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class Api:
    """One Kafka API: its key, name and its request/response declarations."""

    key: int
    name: str
    request: type
    response: type

    @property
    def valid(self) -> Versions:
        return info(self.request).valid

    @property
    def flexible(self) -> Versions:
        return info(self.request).flexible
