"""pytest fixtures for kafka-emu, registered through the ``pytest11`` entry point.

- ``kafka_emu``: a fresh emulator per test (function scope), in a background thread, so it
  serves synchronous clients and any event loop alike.
- ``kafka_emu_session``: one emulator shared by the whole session (faster; groups and topics
  persist between tests, so use unique names).
- ``kafka_emu_factory``: ``kafka_emu_factory({"group.initial.rebalance.delay.ms": 3000},
  topics={"orders": 3})`` starts emulators with custom config, all stopped after the test;
  ``control_port=0`` also serves the HTTP control endpoint at ``emu.control_url``;
  ``clock="manual"`` gives one whose coordinator time moves only when told (``emu.advance``).

Each yields an ``Emulator``: its control methods (advance, advance_to_next_deadline, group
operations, timeline, wait_for_group, wait_for) work from the test's thread. Trio tests that
want awaitable methods use ``kafka_emu.testing.open_emulator`` instead.

Each fixture fails the test at teardown if the emulator hit an unexpected exception.

``pytest --kafka-emu-trace-dir DIR [--kafka-emu-trace-label client=aiokafka ...]
[--kafka-emu-trace-compress gzip]`` (or the environment variable KAFKA_EMU_TRACE_DIR) makes
every emulator these fixtures start write its trace file under DIR (see kafka_emu/trace).
"""

from __future__ import annotations

import contextlib
import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("kafka-emu")
    group.addoption("--kafka-emu-trace-dir", default=os.environ.get("KAFKA_EMU_TRACE_DIR"),
                    help="write a trace file of every emulator the fixtures start under DIR")
    group.addoption("--kafka-emu-trace-label", action="append", default=[],
                    metavar="KEY=VALUE", help="a label on those traces (repeatable)")
    group.addoption("--kafka-emu-trace-compress", choices=["gzip"], default=None,
                    help="compress those traces")


def _tracing(pytestconfig) -> dict:
    return {"trace_dir": pytestconfig.getoption("kafka_emu_trace_dir", None),
            "trace_labels": pytestconfig.getoption("kafka_emu_trace_label", None) or (),
            "trace_compress": pytestconfig.getoption("kafka_emu_trace_compress", None)}


def _emulator(settings=None, *, topics=None, observer=None, control_port=None, tracing=None,
              clock=None):
    # imported here so that loading the plugin (in every pytest run) stays cheap
    from .emulator import make_config, run_in_thread
    return run_in_thread(make_config(settings, topics=topics, clock=clock), observer=observer,
                         control_port=control_port, **(tracing or {}))

@pytest.fixture
def kafka_emu(pytestconfig):
    with _emulator(tracing=_tracing(pytestconfig)) as emulator:
        yield emulator

@pytest.fixture(scope="session")
def kafka_emu_session(pytestconfig):
    with _emulator(tracing=_tracing(pytestconfig)) as emulator:
        yield emulator

@pytest.fixture
def kafka_emu_factory(pytestconfig):
    tracing = _tracing(pytestconfig)
    with contextlib.ExitStack() as stack:
        def start(settings=None, *, topics=None, observer=None, control_port=None, clock=None):
            return stack.enter_context(_emulator(settings, topics=topics, observer=observer,
                                                 control_port=control_port, tracing=tracing,
                                                 clock=clock))
        yield start
