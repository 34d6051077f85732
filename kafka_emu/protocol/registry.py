"""The table of declared APIs, collected from the ``API`` of each module in ``messages/``.

Nothing lists the APIs by hand: adding a module with an ``API`` declares it everywhere (codec
tests, the broker's advertised versions, the admin CLI) once the index is regenerated.

The index (``messages/_index.py``: key -> name, module, valid and flexible versions) is
generated from the declarations by ``python -m kafka_emu.indexes``, so that
a process imports only the declarations it uses: ``APIS[key]`` imports that API's module on
first use (``lazy_table.py``), and what needs only names or version ranges reads the index.
A stale index is caught twice: when a module is loaded, its ``API`` must match its entry (or
loading raises, naming the command that regenerates it), and tests/protocol/test_api_index.py
compares the whole index with a scan of every module.
"""

from __future__ import annotations

import importlib

from . import messages
from .lazy_table import LazyTable
from .messages._index import INDEX
from .schema import Api
from .versions import Versions

REGENERATE = "python -m kafka_emu.indexes"


def entry_of(api: Api, module: str) -> tuple[str, str, str, str]:
    """The index entry of a declared API: (name, module, valid, flexible)."""
    return (api.name, module, str(api.valid), str(api.flexible))


def _load(key: int) -> Api:
    name, module_name, _, _ = INDEX[key]
    module = importlib.import_module(f"{messages.__name__}.{module_name}")
    api = getattr(module, "API", None)
    if not isinstance(api, Api) or api.key != key or entry_of(api, module_name) != INDEX[key]:
        found = entry_of(api, module_name) if isinstance(api, Api) else None
        raise RuntimeError(f"{messages.__name__}._index is stale for api key {key}: it says "
                           f"{INDEX[key]}, the module declares {found}; run `{REGENERATE}`")
    return api


def scan() -> dict[int, tuple[Api, str]]:
    """Every ``API`` declared in ``messages/``, by importing every module: key -> (api, module).
    What the index is generated from and checked against."""
    import pkgutil  # here, not at the top: a serve never scans

    found: dict[int, tuple[Api, str]] = {}
    for mod in pkgutil.iter_modules(messages.__path__):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{messages.__name__}.{mod.name}")
        api = getattr(module, "API", None)
        if isinstance(api, Api):
            if api.key in found:
                raise RuntimeError(f"api key {api.key} declared twice")
            found[api.key] = (api, mod.name)
    return dict(sorted(found.items()))


APIS: dict[int, Api] = LazyTable(INDEX, _load)
BY_NAME: dict[str, Api] = LazyTable((entry[0] for entry in INDEX.values()),
                                    lambda name: APIS[KEY_OF[name]])
KEY_OF: dict[str, int] = {entry[0]: key for key, entry in INDEX.items()}


def name_of(key: int) -> str:
    """The API's name, from the index (no import)."""
    return INDEX[key][0]


def valid_versions(key: int) -> Versions:
    """The versions the API is declared for, from the index (no import)."""
    return Versions.parse(INDEX[key][2])


def index_text() -> str:
    """The text of ``messages/_index.py`` for the declarations as they are now."""
    lines = [f"    {key}: {entry_of(api, module)!r}," for key, (api, module) in scan().items()]
    return _INDEX_TEMPLATE.format(entries="\n".join(lines), regenerate=REGENERATE)


_INDEX_TEMPLATE = '''"""GENERATED from the declarations in this package by `{regenerate}`: do not edit.

key -> (name, module, valid versions, flexible versions) of every declared API, so that a process
imports only the declarations it uses (see ../registry.py)."""

INDEX: dict[int, tuple[str, str, str, str]] = {{
{entries}
}}
'''
