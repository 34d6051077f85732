"""Requests kept by reference, carried to the trace encoder as one block per batch.

Theory of operation. The trace writer takes RequestHandled by reference like the timeline
(``broker/observe.py``, ``REQUEST_REFS``: the frozen request and response and the values read
when the request was handled), so the request path makes no row for it. A batch of such records
becomes one *block* (``pack``): the records' columns, with the request's fields read by one
C-level getter per record, each distinct response's fields once (a Heartbeat's answer is one
shared object per error code) and the clock's constants once -- all plain values that marshal
carries, at a few C passes over the batch and no Python step per record. The encoder process
(``encoder.py``) rebuilds each record from the block and makes its row with ``row_of``
(``expand``): the same function the request path would have run, on equal objects, so the
line is the same, character for character.

A block stands for as many lines as it has records (``lines``). Where a batch does not fit
-- records of more than one request or response class, at_ms read at once (a mock clock) or
from two clock settings -- the writer makes the rows itself, as before.
"""

from __future__ import annotations

import enum
import importlib
import operator
from typing import Any

import attrs

from ..broker.observe import REQUEST_REFS, row_of

BLOCK = "RequestHandled/block"  # the tag of a block item in the writer's queue
_FIRST = operator.itemgetter(0)
_GETTERS: dict[type, Any] = {}  # class -> (its field names, a getter of their values)
_CLASSES: dict[tuple[str, str], type] = {}


def _getter(cls: type) -> Any:
    got = _GETTERS.get(cls)
    if got is None:
        names = tuple(a.name for a in attrs.fields(cls))
        get = operator.attrgetter(*names)
        if len(names) == 1:  # (attrgetter of one name gives the value, not a tuple)
            one = get
            get = lambda value: (one(value),)  # noqa: E731
        got = _GETTERS[cls] = (names, get)
    return got


def _plain(values: tuple) -> tuple:
    return tuple(v.value if isinstance(v, enum.Enum) else v for v in values)


def pack(events: list) -> tuple | None:
    """One block of a batch of REQUEST_REFS records, or None where it does not fit."""
    cols = list(zip(*events))
    qs, rs, ats = cols[1], cols[2], set(cols[5])
    qtypes, rtypes = set(map(type, qs)), set(map(type, rs))
    if len(qtypes) != 1 or len(rtypes) != 1 or len(ats) != 1:
        return None
    (at,) = ats
    if type(at) is not int:
        at = getattr(at, "constants", None)  # broker/clock.py
        if at is None:
            return None
    (qcls,), (rcls,) = qtypes, rtypes
    qnames, qget = _getter(qcls)
    rnames, rget = _getter(rcls)
    distinct = dict(zip(map(id, rs), rs))  # each response once
    responses = {key: _plain(rget(r)) for key, r in distinct.items()}
    spec = (qcls.__module__, qcls.__qualname__, qnames, rcls.__module__, rcls.__qualname__,
            rnames)
    return (BLOCK, spec, at, tuple(map(qget, qs)), tuple(map(id, rs)), responses, *cols[3:5],
            *cols[6:])


def _class(module: str, name: str) -> type:
    cls = _CLASSES.get((module, name))
    if cls is None:
        cls = _CLASSES[(module, name)] = getattr(importlib.import_module(module), name)
    return cls


def expand(block: tuple) -> list[tuple]:
    """The RequestHandled rows of a block, in order."""
    (_, spec, at, qvalues, rkeys, responses, starteds, dones, *rest) = block
    qmodule, qname, qnames, rmodule, rname, rnames = spec
    qcls, rcls = _class(qmodule, qname), _class(rmodule, rname)
    rebuilt = {key: rcls(**dict(zip(rnames, values))) for key, values in responses.items()}
    rows = []
    for i, (values, key, started, done) in enumerate(zip(qvalues, rkeys, starteds, dones)):
        if type(at) is int:
            at_ms = at
        else:  # Clock.ms_at's expression on its constants: the same float operations
            base, shift, start = at
            at_ms = base if shift is None else base + int((shift + done - start) * 1000)
        record = (REQUEST_REFS, qcls(**dict(zip(qnames, values))), rebuilt[key], started, done,
                  at_ms, *(column[i] for column in rest))
        rows.append(row_of(record))
    return rows


def lines(items: list) -> int:
    """How many lines these queued items make."""
    return sum(len(item[3]) if type(item) is tuple and item[0] == BLOCK else 1 for item in items)
