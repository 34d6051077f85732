"""A cheaper ``__init__`` for frozen slotted attrs classes, the same instances out of it.

attrs makes a frozen class's ``__setattr__`` raise, so its generated ``__init__`` stores each
field through ``object.__setattr__`` bound to the new instance -- about twice the cost of the
call itself for a one-field result, and it adds up on the request path, where a Heartbeat builds
a command, a result, a reply envelope and a response. ``fast_init(cls)`` replaces that
``__init__`` with one that stores through the slots' own descriptors (``member.__set__``, which
the frozen ``__setattr__`` never sees). The signature, the defaults and the factories are
attrs', and so is the instance built: the same class, the same slot values, still frozen
(``__setattr__`` raises as before), equal and hashing as before.

A class whose ``__init__`` does more than store its arguments -- validators, converters,
``on_setattr`` hooks, pre/post-init hooks, fields left out of ``__init__``, factories that take
self, hidden slots such as a cached hash -- keeps attrs' own ``__init__``.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, TypeVar

import attrs

_C = TypeVar("_C", bound=type)
_COUNT = itertools.count(1)
_MAKING = threading.RLock()  # lazy_dunders


def fast_init(cls: _C) -> _C:
    """Give ``cls`` the cheaper ``__init__`` on its first instantiation (compiling one costs
    a fraction of a millisecond, too much to spend on every declared class at import); return
    ``cls``. Until then ``inspect.signature`` sees attrs' ``__init__`` through ``__wrapped__``.
    """
    attrs_init = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if cls.__dict__.get("__init__") is __init__:
            compile_init(cls)
            if cls.__dict__.get("__init__") is __init__:  # not reproducible: attrs' own
                cls.__init__ = attrs_init  # type: ignore[misc]
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]

    __init__.__wrapped__ = attrs_init  # type: ignore[attr-defined]
    __init__.__qualname__ = getattr(attrs_init, "__qualname__", "__init__")
    __init__.__doc__ = attrs_init.__doc__
    cls.__init__ = __init__  # type: ignore[misc]
    return cls


def compile_init(cls: _C) -> _C:
    """Give ``cls`` the cheaper ``__init__`` now, if it can be reproduced exactly."""
    source, namespace = _init_source(cls)
    if source is None:
        return cls
    filename = f"<kafka_emu.frozen {cls.__qualname__} #{next(_COUNT)}>"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - from attrs' own fields
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    original = cls.__dict__.get("__init__")
    original = getattr(original, "__wrapped__", original)  # attrs' own, behind fast_init's
    init.__doc__ = getattr(original, "__doc__", None)
    init.__annotations__ = dict(getattr(original, "__annotations__", {}))  # for signatures
    cls.__init__ = init  # type: ignore[misc]
    return cls


def _init_source(cls: type) -> tuple[str | None, dict[str, Any]]:
    if not attrs.has(cls) or "__slots__" not in cls.__dict__:
        return None, {}
    if any(hasattr(cls, hook) for hook in ("__attrs_pre_init__", "__attrs_post_init__")):
        return None, {}
    attributes = attrs.fields(cls)
    names = {a.name for a in attributes}
    slots = {s for k in cls.__mro__ for s in k.__dict__.get("__slots__", ())}
    if slots - names - {"__weakref__"}:
        return None, {}  # a hidden slot (cached hash, ...) that attrs' __init__ also sets
    namespace: dict[str, Any] = {"NOTHING": attrs.NOTHING}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for i, a in enumerate(attributes):
        if (not a.init or a.validator is not None or a.converter is not None
                or a.on_setattr not in (None, attrs.setters.NO_OP)):
            return None, {}
        descriptor = next((k.__dict__[a.name] for k in cls.__mro__
                           if a.name in k.__dict__.get("__slots__", ())), None)
        if descriptor is None or type(descriptor).__name__ != "member_descriptor":
            return None, {}
        setter = f"_set{i}"
        namespace[setter] = descriptor.__set__
        param = a.alias
        default = a.default
        if default is attrs.NOTHING:
            spec = param
            body.append(f"    {setter}(self, {param})")
        elif isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            if default.takes_self:
                return None, {}
            namespace[f"_factory{i}"] = default.factory
            spec = f"{param}=NOTHING"
            body.append(f"    {setter}(self, _factory{i}() if {param} is NOTHING else {param})")
        else:
            namespace[f"_default{i}"] = default
            spec = f"{param}=_default{i}"
            body.append(f"    {setter}(self, {param})")
        (keyword if a.kw_only else positional).append(spec)
    params = ["self", *positional] + (["*", *keyword] if keyword else [])
    lines = [f"def __init__({', '.join(params)}):", *(body or ["    pass"])]
    return "\n".join(lines) + "\n", namespace


def fast_init_module(namespace: dict[str, Any]) -> None:
    """``fast_init`` every attrs class a module defines; call with the module's ``globals()``."""
    module = namespace["__name__"]
    for value in list(namespace.values()):
        if isinstance(value, type) and value.__module__ == module and attrs.has(value):
            fast_init(value)


def lazy_dunders(cls: _C) -> _C:
    """Give a frozen attrs class declared with ``repr=False, eq=False`` the ``__repr__``,
    ``__eq__``, ``__ne__`` and ``__hash__`` attrs makes by default, compiled on first use.

    attrs compiles a class's methods when the class is made; for the classes a serve makes
    before its first answer that is several ms of its start, and most of them are never
    compared, hashed or printed then. Here those four are stubs until one of them is first
    called; then attrs makes them, from the same fields, on a throwaway class with the same
    names (``_twin``), and they replace the stubs for good. What they return is what attrs'
    own would (the hash differs only in the per-class constant attrs mixes in, so equal
    instances still hash equal). ``__init__`` and everything else is attrs' as declared.
    """
    def made(name: str) -> Any:
        # under a lock: two threads making two twins would install two __hash__ functions with
        # different constants, and an instance hashed by the first missed by the second
        with _MAKING:
            if cls.__dict__.get("__eq__") is __eq__:
                twin = _twin(cls)
                for method in ("__repr__", "__eq__", "__ne__", "__hash__"):
                    setattr(cls, method, twin.__dict__[method])
        return cls.__dict__[name]

    def __repr__(self: Any) -> str:
        return made("__repr__")(self)  # type: ignore[no-any-return]

    def __eq__(self: Any, other: object) -> Any:
        return made("__eq__")(self, other)

    def __ne__(self: Any, other: object) -> Any:
        return made("__ne__")(self, other)

    def __hash__(self: Any) -> int:
        return made("__hash__")(self)  # type: ignore[no-any-return]

    for stub in (__repr__, __eq__, __ne__, __hash__):
        stub.__qualname__ = f"{cls.__qualname__}.{stub.__name__}"
        setattr(cls, stub.__name__, stub)
    return cls


def _twin(cls: type) -> type:
    """A plain (unslotted, no ``__init__``) frozen attrs class with ``cls``'s name and fields,
    made only for the methods attrs generates on it."""
    these = {a.name: attrs.field(init=False, repr=a.repr, eq=a.eq_key or a.eq, hash=a.hash)
             for a in attrs.fields(cls)}
    shell = type(cls.__name__, (), {"__qualname__": cls.__qualname__,
                                    "__module__": cls.__module__})
    made: type = attrs.define(these=these, frozen=True, slots=False, init=False, order=False,
                              match_args=False, getstate_setstate=False)(shell)
    return made


def mutable_twin(cls: type) -> type | None:
    """A mutable subclass of the frozen slotted attrs class ``cls`` (no slots of its own), or
    None where ``fast_init`` would keep attrs' ``__init__``.

    A hot path that sets every field builds in it with plain attribute stores (CPython's
    specialised slot stores, where ``fast_init``'s descriptor ``__set__`` is a generic call per
    field) and then gives the instance its real class by ``__class__`` assignment: the same
    instance ``cls(...)`` builds, still frozen. Worth it from about five fields. Unlike the
    codec's ``builder_twin`` it asks no defaults: the caller sets every field.
    """
    if _init_source(cls)[0] is None:
        return None
    twin = type(f"_Mutable{cls.__name__}", (cls,), {
        "__slots__": (), "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__, "__init__": object.__init__,
        "__module__": cls.__module__})
    try:  # the layout is compatible before anything relies on it
        probe = twin()
        for a in attrs.fields(cls):
            setattr(probe, a.name, None)
        probe.__class__ = cls
    except TypeError:
        return None
    return twin if type(probe) is cls else None
