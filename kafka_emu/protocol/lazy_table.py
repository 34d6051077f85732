"""A table whose keys are known up front and whose values are built on first use.

The API table (``registry.APIS``) and the broker's handler table are read on every request but
filled from modules that are costly to import: each message declaration is an attrs class whose
methods attrs compiles, and a serve that imported all of them spent most of its start there. A
``LazyTable`` knows its keys from a small generated index and imports a value's module when the
value is first asked for; after that a lookup is a plain dict subscript (the value is stored in
the dict itself, ``__missing__`` only runs once per key).

Iterating, ``values()`` and ``items()`` load every value (whoever walks the whole table wants
them all); ``in``, ``len`` and ``keys()`` answer from the index alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, KeysView
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LazyTable(dict[K, V]):
    __slots__ = ("_order", "_load")

    def __init__(self, keys: Iterable[K], load: Callable[[K], V]) -> None:
        super().__init__()
        self._order: dict[K, None] = dict.fromkeys(keys)
        self._load = load

    def __missing__(self, key: K) -> V:
        if key not in self._order:
            raise KeyError(key)
        value = self._load(key)
        dict.__setitem__(self, key, value)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._order

    def __iter__(self) -> Iterator[K]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def get(self, key: K, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> KeysView[K]:  # type: ignore[override]
        return self._order.keys()

    def values(self) -> list[V]:  # type: ignore[override]
        return [self[key] for key in self._order]

    def items(self) -> list[tuple[K, V]]:  # type: ignore[override]
        return [(key, self[key]) for key in self._order]

    @property
    def loaded(self) -> list[K]:
        """The keys whose values have been built so far (for tests of the laziness)."""
        return list(dict.keys(self))

    def __repr__(self) -> str:
        return f"LazyTable({len(self._order)} keys, {dict.__len__(self)} loaded)"
