"""The ``crc32c`` package, imported when a batch's CRC is first computed or checked.

Importing crc32c reads its own distribution metadata (``importlib.metadata``), a measurable
part of a serve's start that a broker which has not yet seen a record batch need not pay.
``crc32c.crc32c(data)`` reads the same as with the package itself; after the first call the
function is an attribute of this stand-in, so later calls cost one attribute lookup.
"""

from __future__ import annotations

import importlib
from typing import Any


class _OnFirstUse:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:  # only for attributes not yet copied here
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


crc32c: Any = _OnFirstUse("crc32c")
