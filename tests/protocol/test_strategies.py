"""kafka_emu.testing.strategies: valid messages for a version, built from the declarations."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given

from kafka_emu.protocol.schema import RECORDS, Array, fields_of
from kafka_emu.testing.strategies import messages, present_fields
from protocol_cases import CASES, flexible, hyp, parametrize_cases, default_of


def _check(obj, cls, version, flex, path=""):
    present = {s.name for s in present_fields(cls, version, flex)}
    for spec in fields_of(cls):
        value = getattr(obj, spec.name)
        where = f"{path}{spec.name}"
        if spec.name not in present:
            assert value == default_of(spec), f"{where}: absent from v{version} but not default"
            continue
        if value is None:
            assert version in spec.nullable or spec.type is RECORDS, f"{where}: None"
            continue
        t = spec.type
        if isinstance(t, Array) and isinstance(t.element, type):
            for i, item in enumerate(value):
                assert item is not None, f"{where}[{i}]: None element"
                _check(item, t.element, version, flex, f"{where}[{i}].")
        elif isinstance(t, type) and not isinstance(t, Array):
            _check(value, t, version, flex, f"{where}.")


@parametrize_cases(CASES[::3])
def test_messages_respect_the_version(cls, version):
    @hyp(15)
    @given(messages(cls, version))
    def check(msg):
        assert type(msg) is cls
        _check(msg, cls, version, flexible(cls, version))

    check()


def test_invalid_version_is_refused():
    cls, _ = CASES[0]
    with pytest.raises(ValueError):
        messages(cls, cls.__kafka__.valid.hi + 1)


def test_fields_absent_from_every_version_stay_default():
    # a field "3+" in a message whose v0 is declared: v0 messages keep the default
    found = 0
    for cls, version in CASES:
        for spec in fields_of(cls):
            if version not in spec.versions:
                found += 1
    assert found > 0


def test_strategies_module_imports_no_broker_and_no_trio_of_its_own():
    # hypothesis itself loads trio (trio registers a hypothesis plugin), so compare against it
    code = ("import sys, hypothesis; before = set(sys.modules); "
            "import kafka_emu.testing.strategies; "
            "new = set(sys.modules) - before; "
            "print(sorted(m for m in new if m.startswith(('trio', 'kafka_emu.broker', "
            "'kafka_emu.coordinator', 'socket'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
