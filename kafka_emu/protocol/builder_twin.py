"""Building frozen attrs instances fast: a mutable twin of a frozen slotted class.

Decoding makes many frozen message instances; going through the frozen ``__setattr__`` or the
keyword-argument ``__init__`` costs about twice what plain attribute stores do. The generated
decode code (codegen.py) fills a twin instance and then gives it the real class.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs


def default_of(a: attrs.Attribute) -> tuple[str, Any]:
    if isinstance(a.default, attrs.Factory):
        return ("self", a.default.factory) if a.default.takes_self else (
            "factory", a.default.factory)
    return ("none", None) if a.default is attrs.NOTHING else ("value", a.default)


@functools.cache
def builder_twin(cls: type) -> type | None:
    """A mutable twin of a frozen slotted attrs class, to build decoded instances in.

    The twin subclasses ``cls`` without adding slots and restores plain attribute setting, so
    the generated code fills an instance with ordinary (fast, specialised) attribute stores and
    then gives it its real class by ``__class__`` assignment, which CPython allows between
    layout-compatible heap types. The result is exactly what ``cls(...)`` would have built
    (same class, same slot values) at about half the cost of going through the frozen
    ``__setattr__`` or the keyword-argument ``__init__``. Classes that need their ``__init__``
    (validators, converters, post-init hooks, defaults computed from self, hidden slots such as
    a cached hash) get None and are built by calling them.
    """
    attributes = attrs.fields(cls)
    slots = {s for k in cls.__mro__ for s in k.__dict__.get("__slots__", ())}
    if ("__attrs_post_init__" in dir(cls) or "__attrs_pre_init__" in dir(cls)
            or "__slots__" not in cls.__dict__
            or slots - {a.name for a in attributes} - {"__weakref__"}
            or any(a.validator is not None or a.converter is not None or not a.init
                   or default_of(a)[0] in ("self", "none") for a in attributes)):
        return None
    twin = type(f"_Building{cls.__name__}", (cls,), {
        "__slots__": (), "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__, "__init__": object.__init__,
        "__module__": __name__})
    try:  # prove the layout is compatible before any generated code relies on it
        probe = twin()
        for a in attributes:
            setattr(probe, a.name, None)
        probe.__class__ = cls
    except TypeError:
        return None
    return twin if type(probe) is cls else None
