"""pytest fixtures for kafka-emu, registered through the ``pytest11`` entry point.

- ``kafka_emu``: a fresh emulator per test, in a background thread, so it serves synchronous
  clients and any event loop alike; ``@pytest.mark.kafka_emu(settings={...}, topics={...})``
  configures it for one test.
- ``kafka_emu_session``: one emulator shared by the whole session (each pytest-xdist worker is
  its own process and gets its own, on its own port).
- ``kafka_emu_shared``: that session emulator, reset before the test (topics, groups without
  members and fault rules deleted; the configured topics created again).
- ``kafka_emu_factory``: ``kafka_emu_factory({"group.initial.rebalance.delay.ms": 3000},
  topics={"orders": 3})`` starts emulators with custom config, all stopped after the test;
  ``control_port=0`` also serves the HTTP control endpoint at ``emu.control_url`` (every
  request but /health sends ``Authorization: Bearer <emu.control_token>``);
  ``clock="manual"`` gives one whose coordinator time moves only when told (``emu.advance``).
- ``kafka_emu_trio``: an :class:`AsyncEmulator` running in the test's own trio loop
  (pytest-trio, or anyio with the trio backend): the same methods, each awaitable.

Security: ``settings={"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
"emu.sasl.users": "alice:secret"}`` gives listeners by protocol; ``emu.listeners["SASL_SSL"]`` is
that listener's bootstrap (``bootstrap_servers`` the first's), ``emu.ca_file`` the CA generated at
start for SSL / SASL_SSL, ``emu.tls.client_certificate("CN=alice")`` a client certificate (mTLS).

The thread fixtures yield an ``Emulator``: its control methods (advance,
advance_to_next_deadline, group operations, timeline, wait_for_group, wait_for) work from the
test's thread, trio tests included.

Every emulator these fixtures start gets the ini options first (``kafka_emu_config``: lines of
``KEY=VALUE`` Kafka broker configs; ``kafka_emu_topics``: lines of ``NAME:PARTITIONS``), then the
marker's or the factory's arguments on top. Each fixture fails its test at teardown if the
emulator hit an unexpected exception.

``pytest --kafka-emu-trace-dir DIR [--kafka-emu-trace-label client=aiokafka ...]
[--kafka-emu-trace-compress gzip]`` (or the environment variable KAFKA_EMU_TRACE_DIR) makes
every emulator these fixtures start write its trace file under DIR (see kafka_emu/trace).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .emulator import AsyncEmulator, Emulator

MARKER = "kafka_emu"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-emu")
    group.addoption("--kafka-emu-trace-dir", default=os.environ.get("KAFKA_EMU_TRACE_DIR"),
                    help="write a trace file of every emulator the fixtures start under DIR")
    group.addoption("--kafka-emu-trace-label", action="append", default=[],
                    metavar="KEY=VALUE", help="a label on those traces (repeatable)")
    group.addoption("--kafka-emu-trace-compress", choices=["gzip"], default=None,
                    help="compress those traces")
    parser.addini("kafka_emu_config", type="linelist", default=[],
                  help="kafka-emu: broker configs (KEY=VALUE per line) for every emulator "
                       "the fixtures start")
    parser.addini("kafka_emu_topics", type="linelist", default=[],
                  help="kafka-emu: topics (NAME:PARTITIONS per line) every emulator starts with")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(settings=None, topics=None, brokers=1): broker configs, topics "
                   "and broker count for this "
                   "test's `kafka_emu` emulator, on top of the kafka_emu_config/kafka_emu_topics "
                   "ini options")


# -- configuration --------------------------------------------------------------------------

def _ini_settings(config: pytest.Config) -> dict[str, str]:
    out = {}
    for line in config.getini("kafka_emu_config"):
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"kafka_emu_config: expected KEY=VALUE, got {line!r}")
        out[key.strip()] = value.strip()
    return out


def _ini_topics(config: pytest.Config) -> dict[str, int]:
    out = {}
    for line in config.getini("kafka_emu_topics"):
        name, sep, count = line.rpartition(":")
        if not sep or not name.strip() or not count.strip().isdigit() or int(count) < 1:
            raise pytest.UsageError(f"kafka_emu_topics: expected NAME:PARTITIONS, got {line!r}")
        out[name.strip()] = int(count)
    return out


def _tracing(config: pytest.Config) -> dict[str, Any]:
    return {"trace_dir": config.getoption("kafka_emu_trace_dir", None),
            "trace_labels": config.getoption("kafka_emu_trace_label", None) or (),
            "trace_compress": config.getoption("kafka_emu_trace_compress", None)}


def _merged(config: pytest.Config, settings: Mapping[str, Any] | None,
            topics: Mapping[str, int] | None) -> tuple[dict[str, Any], dict[str, int]]:
    return ({**_ini_settings(config), **(settings or {})}, {**_ini_topics(config), **(topics or {})})


def _emulator(config: pytest.Config, settings: Mapping[str, Any] | None = None, *,
              topics: Mapping[str, int] | None = None,
              observer: Callable[[Any], None] | None = None,
              control_port: int | None = None,
              clock: str | None = None,
              brokers: int = 1) -> contextlib.AbstractContextManager[Emulator]:
    # imported here so that loading the plugin (in every pytest run) stays cheap
    from .emulator import make_config, run_in_thread

    settings, topics = _merged(config, settings, topics)
    return run_in_thread(make_config(settings, topics=topics, clock=clock, brokers=brokers),
                         observer=observer,
                         control_port=control_port, **_tracing(config))


def _marker_arguments(request: pytest.FixtureRequest) -> tuple[Mapping[str, Any] | None,
                                                               Mapping[str, int] | None]:
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return None, None
    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keywords: settings=..., topics=...")
    unknown = set(marker.kwargs) - {"settings", "topics", "brokers"}
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: unknown argument(s) {sorted(unknown)}; "
                                "expected settings=..., topics=..., brokers=...")
    settings = marker.kwargs.get("settings")
    if marker.kwargs.get("brokers", 1) != 1:  # a cluster in one process: emu.brokers
        settings = {**(settings or {}), "emu.brokers": marker.kwargs["brokers"]}
    return settings, marker.kwargs.get("topics")


# -- fixtures -------------------------------------------------------------------------------

@pytest.fixture
def kafka_emu(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    """A fresh kafka-emu for this test, running in a background thread (any client, any event
    loop). Point clients at ``kafka_emu.bootstrap_servers``; inspect with ``describe_group``,
    ``list_groups``, ``create_topic``. Configure it with the ``kafka_emu_config`` /
    ``kafka_emu_topics`` ini options and ``@pytest.mark.kafka_emu(settings={...},
    topics={...})``. Fails the test at teardown if the emulator hit an internal error."""
    settings, topics = _marker_arguments(request)
    with _emulator(request.config, settings, topics=topics) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def kafka_emu_session(pytestconfig: pytest.Config) -> Iterator[Emulator]:
    """One kafka-emu shared by every test of the session (configured by the ini options only).
    State persists between tests: use unique group and topic names, or ``kafka_emu_shared``.
    Under pytest-xdist each worker process has its own."""
    with _emulator(pytestconfig) as emulator:
        yield emulator


@pytest.fixture
def kafka_emu_shared(kafka_emu_session: Emulator) -> Emulator:
    """The session's kafka-emu, reset for this test: every topic, every group without members
    and every fault rule deleted, and the ini option's topics created again. Groups whose
    clients are still connected survive: close clients at the end of each test."""
    kafka_emu_session.reset()
    return kafka_emu_session


@pytest.fixture
def kafka_emu_factory(pytestconfig: pytest.Config) -> Iterator[Callable[..., Emulator]]:
    """A function that starts emulators for this test, all stopped after it:
    ``kafka_emu_factory(settings=None, *, topics=None, observer=None, control_port=None,
    clock=None, brokers=1)``. ``settings`` are Kafka broker configs on top of the ``kafka_emu_config`` ini
    option; ``control_port=0`` also serves the HTTP control endpoint (``emu.control_url``,
    its token ``emu.control_token``);
    ``clock="manual"`` moves the coordinator's time only when told (``emu.advance``);
    ``brokers=3`` starts a cluster of three brokers in one process."""
    with contextlib.ExitStack() as stack:
        def start(settings: Mapping[str, Any] | None = None, *,
                  topics: Mapping[str, int] | None = None,
                  observer: Callable[[Any], None] | None = None,
                  control_port: int | None = None, clock: str | None = None,
                  brokers: int = 1) -> Emulator:
            return stack.enter_context(_emulator(pytestconfig, settings, topics=topics,
                                                 observer=observer, control_port=control_port,
                                                 clock=clock, brokers=brokers))
        yield start


@pytest.fixture
async def kafka_emu_trio(request: pytest.FixtureRequest) -> AsyncIterator[AsyncEmulator]:
    """A fresh kafka-emu inside the test's own trio loop (an async fixture: pytest-trio, or
    anyio's plugin with the trio backend), as an ``AsyncEmulator``: the methods of
    ``kafka_emu``, each awaited (``await kafka_emu_trio.describe_group("g")``). Same
    configuration as ``kafka_emu`` (ini options and marker)."""
    from .emulator import make_config, open_emulator

    settings, topics = _merged(request.config, *_marker_arguments(request))
    async with open_emulator(make_config(settings, topics=topics),
                             **_tracing(request.config)) as emulator:
        yield emulator
