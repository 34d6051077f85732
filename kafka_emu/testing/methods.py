"""Handle methods declared once for both handles, with their real types.

Theory of operation. A handle method is declared once, on the shared base of ``Emulator`` and
``AsyncEmulator``, as a *builder*: a function of the handle and the method's arguments that
returns a ``Job`` -- the work to run on the emulator's trio thread (a function of the live
broker, plain or async). ``op(ops_function, **params)`` is the job of a control operation: its
parameters are validated at once, in the caller's thread, and its type is the operation's
declared result (the ops function's return annotation, ``control/results.py``).

``handle_method`` turns a builder into a descriptor. Read from an ``Emulator`` it is a method
that runs the job on the emulator's thread and returns the value; read from an
``AsyncEmulator``, an ``async`` method that returns it when awaited. Its overloaded ``__get__``
tells type checkers exactly that: ``emu.advance(5000)`` is an ``Advanced``,
``async_emu.advance(5000)`` an ``Awaitable[Advanced]``, with the builder's own parameters.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from ..control.operations import operation_of, parse_params

if TYPE_CHECKING:
    from .handles import AsyncEmulator, Emulator

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


class Job(Generic[R]):
    """Work for the emulator's trio thread: ``run(broker)``, a plain or an async function."""

    def __init__(self, run: Callable[[Any], Any], *, is_async: bool = False) -> None:
        self.run = run
        self.is_async = is_async

    def then(self, convert: Callable[[R], S]) -> Job[S]:
        """This job with ``convert`` applied to its value (on the emulator's thread)."""
        run = self.run
        if self.is_async:
            async def converted(broker: Any) -> S:
                return convert(await run(broker))
            return Job(converted, is_async=True)
        return Job(lambda broker: convert(run(broker)))


def on_broker(fn: Callable[[Any], R]) -> Job[R]:
    """A job that calls ``fn(broker)``."""
    return Job(fn)


def op(fn: Callable[[Any, Any], R], /, **params: Any) -> Job[R]:
    """The job of the control operation registered for ``fn`` (an ops function), its parameters
    parsed now: bad input raises ``ControlError`` here, before anything runs."""
    operation = operation_of(fn)
    parsed = parse_params(operation, params)
    return Job(lambda broker: operation.run(broker, parsed))


def async_op(fn: Callable[[Any, Any], Awaitable[R]], /, **params: Any) -> Job[R]:
    """``op`` for an operation that waits (an ``async def`` ops function)."""
    operation = operation_of(fn)
    parsed = parse_params(operation, params)

    async def run(broker: Any) -> R:
        return await operation.run(broker, parsed)  # type: ignore[no-any-return]
    return Job(run, is_async=True)


class handle_method(Generic[P, R]):  # noqa: N801 -- used as a decorator, like property
    """A method of both handles, built from ``build(handle, *args, **kwargs) -> Job``.

    Read from a handle class it is a plain function (a blocking one on ``Emulator``, an
    ``async def`` on ``AsyncEmulator``) with the builder's signature, so ``help()``, IDEs and
    ``inspect`` see an ordinary method; read from a handle, that function bound to it."""

    def __init__(self, build: Callable[Concatenate[Any, P], Job[R]]) -> None:
        self._build = build
        self._functions: dict[bool, Callable[..., Any]] = {}
        functools.update_wrapper(self, build)  # type: ignore[arg-type]

    @overload
    def __get__(self, handle: None, owner: type[Emulator]) -> Callable[Concatenate[Emulator, P], R]:
        ...

    @overload
    def __get__(self, handle: None, owner: type[AsyncEmulator]
                ) -> Callable[Concatenate[AsyncEmulator, P], Awaitable[R]]: ...

    @overload
    def __get__(self, handle: None, owner: type) -> handle_method[P, R]: ...

    @overload
    def __get__(self, handle: Emulator, owner: type) -> Callable[P, R]: ...

    @overload
    def __get__(self, handle: AsyncEmulator, owner: type) -> Callable[P, Awaitable[R]]: ...

    def __get__(self, handle: Any, owner: type) -> Any:
        awaited = bool(getattr(owner, "_awaited", False))
        if handle is None and not hasattr(owner, "_execute"):
            return self
        function = self._functions.get(awaited)
        if function is None:
            function = self._functions[awaited] = self._function(awaited)
        return function if handle is None else types.MethodType(function, handle)

    def _function(self, awaited: bool) -> Callable[..., Any]:
        build = self._build
        async def awaited_method(handle: Any, *args: Any, **kwargs: Any) -> Any:
            return await handle._execute(build(handle, *args, **kwargs))

        def blocking_method(handle: Any, *args: Any, **kwargs: Any) -> Any:
            return handle._execute(build(handle, *args, **kwargs))

        method: Callable[..., Any] = awaited_method if awaited else blocking_method
        functools.update_wrapper(method, build)
        vars(method).pop("__wrapped__")  # inspect is to read __signature__, not the builder's
        signature = inspect.signature(build)
        returns = signature.return_annotation
        if isinstance(returns, str) and returns.startswith("Job[") and returns.endswith("]"):
            returns = returns[4:-1]
        method.__signature__ = signature.replace(  # type: ignore[attr-defined]
            return_annotation=returns)
        return method
