"""Arrays of structs encoded once and written many times.

Some responses repeat a large array unchanged from one request to the next: DescribeGroups of a
thousand-member group describes the same thousand members until one of them changes. Encoding
them each time costs far more than the rest of the request. A handler that knows the array has
not changed since it last encoded it (for the same version) hands the codec an
:class:`EncodedArray` where the array goes; the generated code writes its element count and its
bytes instead of encoding the elements again.

An EncodedArray is made by :func:`encode_array` from the elements and the version, through the
same compiled plan the codec would use, so the bytes are exactly what encoding the elements in
place would write. It remembers that plan, and the generated code refuses (EncodeError) an
EncodedArray made for another element type, version or flexibility instead of writing wrong
bytes. It keeps its elements: it reads, iterates and compares like the tuple of them, so a
response holding one looks like one holding the list (tests, observers). Nothing here knows any
particular message.

The elements need not be built to be encoded. Given ``names`` (field -> attribute), the items
may be any objects holding every field of the element class, under those names where they differ
(a coordinator's described members): they are written through the same plan reading those
attributes (``codegen.source_writer``), and the element instances are built from them only if
someone reads the array (tests, observers), once. A thousand members are then built once, by
the coordinator, instead of twice.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .errors import EncodeError
from .primitives import write_uvarint
from .schema import fields_of

if TYPE_CHECKING:
    from .codegen import Plan

_INT32 = struct.Struct(">i")
# what a struct's generated writer may raise on a bad value (as codec.py maps them)
_ENCODE_FAILURES = (ValueError, TypeError, AttributeError, OverflowError, struct.error)


class EncodedArray:
    """An array of structs with its encoding for one plan (element class, version, flexible).

    Immutable once made (slots, no setters); only :func:`encode_array` makes one. ``items`` are
    the elements; where they were encoded from other objects (``names``), they are built from
    those on first reading and kept."""

    __slots__ = ("source", "names", "built", "data", "plan", "head")
    source: tuple[Any, ...]
    names: dict[str, str] | None
    built: tuple[Any, ...] | None
    data: bytes
    plan: Plan
    # the element count as the array's length prefix in the plan's encoding: the codec writes it
    # as it is, instead of asking ``len`` (a Python call) and encoding the count each time
    head: bytes

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"EncodedArray is immutable (cannot set {name})")

    @property
    def items(self) -> tuple[Any, ...]:
        built = self.built
        if built is None and self.names is None:  # made from its bytes: decode them
            built = _decode(self.plan, len(self.source), self.data)
            object.__setattr__(self, "built", built)
        elif built is None:
            element, names = self.plan.cls, self.names
            wanted = [(f.name, names.get(f.name, f.name)) for f in fields_of(element)]
            built = tuple(element(**{name: getattr(item, attr) for name, attr in wanted})
                          for item in self.source)
            object.__setattr__(self, "built", built)  # a cache: the same elements every time
        return built

    def __len__(self) -> int:
        return len(self.source)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedArray):
            return self.items == other.items
        if isinstance(other, (list, tuple)):
            return list(self.items) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return (f"EncodedArray({len(self.source)} {self.plan.cls.__name__} "
                f"v{self.plan.version}, {len(self.data)} bytes)")


def encode_array(message: type, version: int, element: type, items: Iterable[Any],
                 names: dict[str, str] | None = None) -> EncodedArray:
    """``items`` (instances of the struct class ``element``, or, with ``names``, objects holding
    its fields, ``names`` mapping a field to the attribute that holds it where they differ)
    encoded as the elements of an array inside the declared message ``message`` at ``version``
    (its flexibility decides the encoding). The count is not in ``data``: it is ``head``, the
    array's length prefix, which the codec writes before it."""
    from .codegen import plan_for, source_writer  # codegen imports this module for the class

    plan = plan_for(element, version, version in message.__kafka__.flexible)
    items = tuple(items)
    out = bytearray()
    write = plan.write if names is None else source_writer(plan, tuple(sorted(names.items())))
    try:
        for item in items:
            write(out, item)
    except _ENCODE_FAILURES as exc:
        raise EncodeError(f"{element.__name__} v{version} in {message.__name__}: "
                          f"{type(exc).__name__}: {exc}") from None
    made = object.__new__(EncodedArray)
    object.__setattr__(made, "source", items)
    object.__setattr__(made, "names", names)
    object.__setattr__(made, "built", items if names is None else None)
    object.__setattr__(made, "data", bytes(out))
    object.__setattr__(made, "plan", plan)
    head = bytearray()
    if plan.flexible:  # compact: the count plus one, as an unsigned varint
        write_uvarint(head, len(items) + 1)
    else:
        head += _INT32.pack(len(items))
    object.__setattr__(made, "head", bytes(head))
    return made


def _decode(plan: Plan, count: int, data: bytes) -> tuple[Any, ...]:
    read, items, pos, end = plan.read_at, [], 0, len(data)
    for _ in range(count):
        item, pos = read(data, pos, end)
        items.append(item)
    return tuple(items)


def element_plan(message: type, version: int, element: type) -> Plan:
    """The plan ``encode_array`` writes ``element`` by inside ``message`` at ``version``."""
    from .codegen import plan_for  # codegen imports this module for the class

    return plan_for(element, version, version in message.__kafka__.flexible)


class _Making(EncodedArray):
    """EncodedArray's mutable twin: filled by plain slot stores, then given the real class."""

    __slots__ = ()
    __setattr__ = object.__setattr__  # type: ignore[assignment]


_COMPACT_HEADS = tuple(bytes((n + 1,)) for n in range(127))  # a compact count, one byte


def encoded_elements(plan: Plan, count: int, data: bytes | bytearray) -> EncodedArray:
    """An EncodedArray of ``count`` elements already written into ``data`` through ``plan``
    (``element_plan``) by a handler that writes them itself (the Produce fast path): the bytes
    ``encode_array`` would have written. Its elements are decoded from ``data`` only if someone
    reads them."""
    made = _Making()
    made.source = (None,) * count  # (its length is the array's)
    made.names = None
    made.built = None
    made.data = data
    made.plan = plan
    if plan.flexible and count < 127:
        made.head = _COMPACT_HEADS[count]
    else:
        head = bytearray()
        if plan.flexible:
            write_uvarint(head, count + 1)
        else:
            head += _INT32.pack(count)
        made.head = bytes(head)
    made.__class__ = EncodedArray
    return made
