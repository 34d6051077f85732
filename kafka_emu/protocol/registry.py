"""The table of declared APIs, collected from the ``API`` of each module in ``messages/``.

Nothing lists the APIs twice: adding a module with an ``API`` declares it everywhere (codec
tests, the broker's advertised versions, the admin CLI).
"""

from __future__ import annotations

import importlib
import pkgutil

from . import messages
from .schema import Api


def _collect() -> dict[int, Api]:
    apis: dict[int, Api] = {}
    for mod in pkgutil.iter_modules(messages.__path__):
        module = importlib.import_module(f"{messages.__name__}.{mod.name}")
        api = getattr(module, "API", None)
        if isinstance(api, Api):
            if api.key in apis:
                raise RuntimeError(f"api key {api.key} declared twice")
            apis[api.key] = api
    return dict(sorted(apis.items()))


APIS: dict[int, Api] = _collect()
BY_NAME: dict[str, Api] = {api.name: api for api in APIS.values()}
