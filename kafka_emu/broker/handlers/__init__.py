"""One small module per API: wire message (any version) <-> coordinator command or topic op.

Each module defines ``HANDLER = Handler(API, "versions", fn)`` where ``fn(ctx, request)`` is an
async function returning the response message (or None for requests Kafka does not answer,
such as acks=0 Produce). The table below is collected from the modules, and the versions the
broker advertises in ApiVersions are derived from it and the declarations -- never listed twice.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ...protocol.schema import Api
from ...protocol.versions import Versions, versions


@attrs.frozen
class Handler:
    api: Api
    supported: Versions
    fn: Callable[[Any, Any], Awaitable[Any]]

    def __init__(self, api: Api, supported: str, fn) -> None:
        self.__attrs_init__(api, versions(supported).intersect(api.valid), fn)


def _collect() -> dict[int, Handler]:
    table: dict[int, Handler] = {}
    for mod in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{mod.name}")
        handler = getattr(module, "HANDLER", None)
        if isinstance(handler, Handler):
            table[handler.api.key] = handler
    return dict(sorted(table.items()))


HANDLERS: dict[int, Handler] = _collect()


def advertised_versions(max_versions: dict[str, int] | None = None) -> dict[int, Versions]:
    """api key -> the range this broker serves, capped per API name by config."""
    caps = max_versions or {}
    result = {}
    for key, handler in HANDLERS.items():
        supported = handler.supported
        cap = caps.get(handler.api.name)
        if cap is not None:
            supported = supported.intersect(Versions(0, cap))
        if not supported.empty:
            result[key] = supported
    return result
