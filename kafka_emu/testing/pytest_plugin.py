"""pytest fixtures for kafka-emu, registered through the ``pytest11`` entry point.

- ``kafka_emu``: a fresh emulator per test (function scope), in a background thread, so it
  serves synchronous clients and any event loop alike.
- ``kafka_emu_session``: one emulator shared by the whole session (faster; groups and topics
  persist between tests, so use unique names).
- ``kafka_emu_factory``: ``kafka_emu_factory({"group.initial.rebalance.delay.ms": 3000},
  topics={"orders": 3})`` starts emulators with custom config, all stopped after the test;
  ``control_port=0`` also serves the HTTP control endpoint at ``emu.control_url``.

Each fixture fails the test at teardown if the emulator hit an unexpected exception.
"""

from __future__ import annotations

import contextlib

import pytest

def _emulator(settings=None, *, topics=None, observer=None, control_port=None):
    # imported here so that loading the plugin (in every pytest run) stays cheap
    from .emulator import make_config, run_in_thread
    return run_in_thread(make_config(settings, topics=topics), observer=observer,
                         control_port=control_port)

@pytest.fixture
def kafka_emu():
    with _emulator() as emulator:
        yield emulator

@pytest.fixture(scope="session")
def kafka_emu_session():
    with _emulator() as emulator:
        yield emulator

@pytest.fixture
def kafka_emu_factory():
    with contextlib.ExitStack() as stack:
        def start(settings=None, *, topics=None, observer=None, control_port=None):
            return stack.enter_context(_emulator(settings, topics=topics, observer=observer,
                                                 control_port=control_port))
        yield start
