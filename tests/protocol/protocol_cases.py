"""Every declared message class and version, collected from the registry (and from the
``kind="data"`` classes of ``messages/consumer_protocol.py``): the parameter lists of the codec
tests, so that a newly declared API is covered without touching any test.

Hypothesis budget: the whole tests/protocol run must stay well under two minutes on two cores.
There are ~300 (class, version) cases, so each property gets a modest ``max_examples`` per case
(``EXAMPLES``, ``FEW``); the case count, not the per-case depth, gives the coverage. Deadlines
are off because test machines are shared and noisy.
"""

from __future__ import annotations

import importlib
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, settings

from kafka_emu.protocol import APIS
from kafka_emu.protocol.schema import Array, FieldSpec, fields_of

EXAMPLES = 25  # per (class, version), for the cheap properties (round trip, fuzz)
FEW = 10  # per (class, version), for the dearer ones (kafka-python cross-check)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])


def hyp(max_examples: int = EXAMPLES):
    return settings(max_examples=max_examples, **SETTINGS)


def data_classes() -> list[type]:
    """The embedded schemas (``@message(kind="data")``) of the consumer protocol module."""
    try:
        module = importlib.import_module("kafka_emu.protocol.messages.consumer_protocol")
    except ImportError:
        return []
    return [v for v in vars(module).values()
            if isinstance(v, type) and getattr(v, "__kafka__", None) is not None
            and v.__kafka__.kind == "data" and v.__module__ == module.__name__]


def message_classes() -> list[type]:
    classes = []
    for api in APIS.values():
        classes += [api.request, api.response]
    return classes + data_classes()


def all_cases() -> list[tuple[type, int]]:
    return [(cls, v) for cls in message_classes() for v in cls.__kafka__.valid]


CASES = all_cases()
CASE_IDS = [f"{cls.__name__}-v{v}" for cls, v in CASES]


def parametrize_cases(cases: list[tuple[type, int]] | None = None):
    cases = CASES if cases is None else cases
    return pytest.mark.parametrize("cls,version", cases,
                                   ids=[f"{c.__name__}-v{v}" for c, v in cases])


def flexible(cls: type, version: int) -> bool:
    return version in cls.__kafka__.flexible


# --- values that differ from a field's default (for EncodeError and locating tests) -------

def different(type_: Any, default: Any) -> Any:
    """A value of ``type_`` that is not ``default`` (a struct: its first field changed)."""
    from kafka_emu.protocol.schema import (BOOL, BYTES, FLOAT64, RECORDS, STRING, UUID)
    import uuid
    if isinstance(type_, Array):
        el = type_.element
        return [el() if isinstance(el, type) else different(el, getattr(el, "zero", None))]
    if isinstance(type_, type):
        first = fields_of(type_)[0]
        value = different(first.type, _default(first))
        return type_(**{attrs.fields_dict(type_)[first.name].alias: value})
    if type_ is BOOL:
        return not default
    if type_ is STRING:
        return "x" if default in (None, "") else default + "x"
    if type_ is BYTES or type_ is RECORDS:
        return b"x" if not default else default + b"x"
    if type_ is UUID:
        return uuid.UUID(int=1) if default != uuid.UUID(int=1) else uuid.UUID(int=2)
    if type_ is FLOAT64:
        return (default or 0.0) + 1.5
    return 1 if default != 1 else 2  # every integer type holds 1 and 2


def _default(spec: FieldSpec) -> Any:
    if spec.default is attrs.NOTHING:
        return spec.type()
    return spec.default


def default_of(spec: FieldSpec) -> Any:
    return _default(spec)
