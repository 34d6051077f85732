"""The control plane's operations, declared once for every surface.

Theory of operation. An operation is a function ``run(broker, params)`` plus the attrs class of
its parameters. It runs on the emulator's own trio thread (the Python handle gets there with
``trio.from_thread``; the HTTP endpoint already runs there), so it may touch the broker freely.
It returns a JSON-able value (dicts, lists, str, int, float, bool, None) whose type its return
annotation declares (a TypedDict of ``control/results.py``, or a list of one): that annotation is
the operation's result type for every surface (``Operation.result``; the Python handles' types,
the OpenAPI response schemas). ``run`` may be an ``async def`` when the operation waits
(waiters); everything else is synchronous and never blocks.

Bad input raises ``ControlError`` (status 400 for a malformed value, 404 for an unknown group,
member, rule, ...), *before* anything is changed: an operation that fails changes nothing.

``parse_params`` builds the params object from JSON-like input (HTTP body/query, CLI flags,
Python keyword arguments) by reading the attrs fields' types, so every surface validates the
same way and the OpenAPI document (``openapi()``) is derived from the same declarations.
Every number a client can send is bounded (``bounded``: the field's ``minimum``/``maximum``
metadata, checked here and shown in the OpenAPI document), so no value reaches the broker that
its arithmetic, timers or memory cannot take: out of range is a 400 naming the bounds.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs


class ControlError(Exception):
    """A control request that cannot be carried out; nothing was changed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@attrs.frozen(kw_only=True)
class NoParams:
    """For operations that take no parameters."""


@attrs.frozen
class Operation:
    name: str  # snake_case: the Python method and (with dashes) the CLI subcommand
    method: str  # the HTTP method: GET for reads, POST/DELETE for changes
    path: str  # the HTTP path, e.g. "/groups/{group_id}/members/{member_id}/expire"
    params: type  # an attrs class; path placeholders are fields of it too
    run: Callable[[Any, Any], Any]
    summary: str

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.run)

    @property
    def result(self) -> Any:
        """The result type ``run`` declares (its return annotation, ``Annotated`` kept); ``Any``
        for a function that declares none."""
        return typing.get_type_hints(self.run, include_extras=True).get("return", Any)


OPERATIONS: dict[str, Operation] = {}
_BY_FUNCTION: dict[Callable[..., Any], Operation] = {}


def operation(method: str, path: str, params: type = NoParams, *, name: str | None = None,
              summary: str | None = None) -> Callable[[Callable], Callable]:
    """Register ``fn(broker, params)`` as a control operation (see the module doc)."""
    def register(fn: Callable) -> Callable:
        op_name = name or fn.__name__
        if op_name in OPERATIONS:
            raise RuntimeError(f"control operation {op_name!r} declared twice")
        doc = summary if summary is not None else (inspect.getdoc(fn) or "").split("\n\n")[0]
        OPERATIONS[op_name] = _BY_FUNCTION[fn] = Operation(op_name, method.upper(), path, params,
                                                           fn, " ".join(doc.split()))
        return fn
    return register


def all_operations() -> dict[str, Operation]:
    """Every operation, with every module of ``control/ops`` imported."""
    from . import ops
    for mod in pkgutil.iter_modules(ops.__path__):
        importlib.import_module(f"{ops.__name__}.{mod.name}")
    return OPERATIONS


def operation_of(fn: Callable[..., Any]) -> Operation:
    """The operation ``fn`` was registered as (the Python handles name operations by their
    functions, so a type checker reads each one's result type from its annotation)."""
    return _BY_FUNCTION[fn]


# -- parameters ---------------------------------------------------------------------------------

# Common bounds. Kafka's own timeouts and counts are int32 and its offsets int64; a value past
# those could never come from a real cluster, and would overflow a timer or a wire field here.
INT16_MAX = 0x7FFF
INT32_MAX = 0x7FFF_FFFF
INT64_MAX = 0x7FFF_FFFF_FFFF_FFFF


def bounded(minimum: int | float, maximum: int | float, *, default: Any = attrs.NOTHING,
            doc: str | None = None) -> Any:
    """An attrs field for a number that must lie within ``minimum..maximum`` (inclusive):
    ``parse_params`` refuses anything else with a 400 naming the bounds (NaN included), and the
    OpenAPI document shows them as ``minimum``/``maximum``. ``None`` (an optional field left
    unset) is not a number and passes."""
    metadata: dict[str, Any] = {"minimum": minimum, "maximum": maximum}
    if doc is not None:
        metadata["doc"] = doc
    return attrs.field(default=default, metadata=metadata)


def check_bounds(name: str, value: Any, minimum: Any, maximum: Any) -> None:
    """ControlError unless the number ``value`` lies within ``minimum..maximum``."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if minimum is not None and maximum is not None:
        if not minimum <= value <= maximum:  # (NaN compares False: refused too)
            raise ControlError(f"{name} must be >= {minimum} and <= {maximum}, got {value}")
    elif minimum is not None and not value >= minimum:
        raise ControlError(f"{name} must be >= {minimum}, got {value}")
    elif maximum is not None and not value <= maximum:
        raise ControlError(f"{name} must be <= {maximum}, got {value}")


def _hints(cls: type) -> dict[str, Any]:
    cached = cls.__dict__.get("__control_hints__")
    if cached is None:
        cached = typing.get_type_hints(cls)
        setattr(cls, "__control_hints__", cached)
    return cached


def _convert(name: str, tp: Any, value: Any) -> Any:
    """``value`` as type ``tp`` (from JSON or CLI text), or ControlError naming the field."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                return _convert(name, option, value)
            except ControlError as exc:
                errors.append(exc.message)
        raise ControlError(errors[0] if len(errors) == 1 else f"{name}: {value!r} fits none of "
                           f"{', '.join(getattr(o, '__name__', str(o)) for o in options)}")
    if origin is typing.Literal:
        if value not in args:
            raise ControlError(f"{name}: expected one of {', '.join(map(repr, args))}, "
                               f"got {value!r}")
        return value
    if origin in (tuple, list):
        if isinstance(value, str):
            value = [v for v in value.split(",") if v] if value else []
        if not isinstance(value, (list, tuple)):
            raise ControlError(f"{name}: expected a list, got {value!r}")
        element = args[0] if args else Any
        return tuple(_convert(name, element, v) for v in value)
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise ControlError(f"{name}: expected an object, got {value!r}")
        return dict(value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ControlError(f"{name}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, bool):
            raise ControlError(f"{name}: expected an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ControlError(f"{name}: expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise ControlError(f"{name}: expected a number, got {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ControlError(f"{name}: expected a string, got {value!r}")
    return value  # Any


def parse_params(op: Operation, raw: Mapping[str, Any]) -> Any:
    """The params object of ``op`` from JSON-like ``raw``; ControlError for unknown names,
    missing required fields or values of the wrong type. Field validators (attrs) may raise
    ValueError with a message; that is a ControlError too."""
    cls = op.params
    fields = {f.name: f for f in attrs.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ControlError(f"unknown parameter(s) for {op.name}: {', '.join(unknown)} "
                           f"(known: {', '.join(fields) or 'none'})")
    hints = _hints(cls)
    values = {}
    for key, value in raw.items():
        values[key] = converted = _convert(key, hints.get(key, Any), value)
        meta = fields[key].metadata
        check_bounds(key, converted, meta.get("minimum"), meta.get("maximum"))
    missing = [n for n, f in fields.items() if f.default is attrs.NOTHING and n not in values]
    if missing:
        raise ControlError(f"{op.name} needs {', '.join(missing)}")
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise ControlError(f"{op.name}: {exc}") from None
