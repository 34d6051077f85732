"""One small module per API: wire message (any version) <-> coordinator command or topic op.

Each module defines ``HANDLER = Handler(API, "versions", fn)`` where ``fn(ctx, request)`` is an
async function returning the response message (or None for requests Kafka does not answer,
such as acks=0 Produce). The table below is collected from the modules, and the versions the
broker advertises in ApiVersions are derived from it and the declarations -- never listed twice.

A handler module imports its declarations and the coordinator's commands, so the table is lazy
(as ``protocol.registry.APIS`` is): ``_index.py``, generated from the modules by ``python -m
kafka_emu.indexes``, names each handler's module and served versions; ``HANDLERS[key]`` imports
the module on first use and checks it against its entry. ApiVersions answers from the index.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ...frozen import lazy_dunders
from ...protocol.lazy_table import LazyTable
from ...protocol.registry import REGENERATE, name_of
from ...protocol.schema import Api
from ...protocol.versions import Versions, versions
from ._index import INDEX


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class Handler:
    api: Api
    supported: Versions
    fn: Callable[[Any, Any], Awaitable[Any]]

    def __init__(self, api: Api, supported: str, fn) -> None:
        self.__attrs_init__(api, versions(supported).intersect(api.valid), fn)


def _load(key: int) -> Handler:
    module_name, supported = INDEX[key]
    module = importlib.import_module(f"{__name__}.{module_name}")
    handler = getattr(module, "HANDLER", None)
    if (not isinstance(handler, Handler) or handler.api.key != key
            or str(handler.supported) != supported):
        found = (module_name, str(handler.supported)) if isinstance(handler, Handler) else None
        raise RuntimeError(f"{__name__}._index is stale for api key {key}: it says "
                           f"{INDEX[key]}, the module has {found}; run `{REGENERATE}`")
    return handler


def scan() -> dict[int, tuple[Handler, str]]:
    """Every ``HANDLER`` in this package, by importing every module: key -> (handler, module).
    What the index is generated from and checked against."""
    import pkgutil  # here, not at the top: a serve never scans

    table: dict[int, tuple[Handler, str]] = {}
    for mod in pkgutil.iter_modules(__path__):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{mod.name}")
        handler = getattr(module, "HANDLER", None)
        if isinstance(handler, Handler):
            table[handler.api.key] = (handler, mod.name)
    return dict(sorted(table.items()))


HANDLERS: dict[int, Handler] = LazyTable(INDEX, _load)
_SUPPORTED = {key: Versions.parse(supported) for key, (_, supported) in INDEX.items()}


def index_text() -> str:
    """The text of ``_index.py`` for the handler modules as they are now."""
    lines = [f"    {key}: {(module, str(handler.supported))!r},"
             for key, (handler, module) in scan().items()]
    return _INDEX_TEMPLATE.format(entries="\n".join(lines), regenerate=REGENERATE)


_INDEX_TEMPLATE = '''"""GENERATED from the handler modules in this package by `{regenerate}`: do not edit.

key -> (module, the versions its handler serves: its own range within the declared one), so that
a process imports only the handlers it uses (see __init__.py)."""

INDEX: dict[int, tuple[str, str]] = {{
{entries}
}}
'''


def advertised_versions(max_versions: dict[str, int] | None = None) -> dict[int, Versions]:
    """api key -> the range this broker serves, capped per API name by config."""
    caps = max_versions or {}
    result = {}
    for key, supported in _SUPPORTED.items():
        cap = caps.get(name_of(key))
        if cap is not None:
            supported = supported.intersect(Versions(0, cap))
        if not supported.empty:
            result[key] = supported
    return result
