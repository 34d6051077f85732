"""Loading what a first group needs as soon as the server is idle, so that no group request
pays for it.

A start is cheap because the coordinator, the handlers, the message declarations and the codec
plans load on first use (lazy_table.py, codegen.py). Left at that, the first JoinGroup of a
fresh emulator paid for most of them at once -- about 60 ms of server CPU against 1 for a later
one, during which every other connection waits, as the server is one thread (issue 40). Loading
them before the listener opens would add as much to every start (166 ms of CPU to listening,
+80 ms). So once the listener is open, ``warm_up`` loads them ahead of use, in two parts, each
run only when the whole server is idle (trio's ``wait_all_tasks_blocked``: every task waits,
and no socket has become ready meanwhile):

1. ``group_path``, at the first idle millisecond (``IDLE_S``), in one go (about 110 ms): the
   modules of the group coordinator (imported bottom-up), the handlers and declarations of the
   requests that form a group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetFetch),
   the compiled ``__init__`` of their classes (frozen.py), the codec's functions for the
   versions the clients of the day send (``FIRST_VERSIONS``, and each API's newest), the
   functions that make their RequestHandled rows if anything observes (made at each API's
   first request otherwise: the log sink, the Python runners' timeline, a control endpoint's,
   a trace); then the broker's coordinator. In one go, so that a client that connects at once
   finds the group path loaded when its group requests come: a request that arrives meanwhile
   (its first, as a rule: ApiVersions, Metadata) waits for it, as it would have waited for
   the server's start had this been loaded before listening.
2. ``later_steps``, each once the server has been idle for ``REST_IDLE_S`` (20 ms, so not in
   the gaps of a client's burst of requests): the log package, ApiVersions', OffsetCommit's
   and LeaveGroup's handlers, then Metadata's and the data path's (Produce, Fetch,
   ListOffsets, InitProducerId), the codec's functions for the data path's versions the
   clients of the day send (``DATA_VERSIONS``), the other versions of the group path and
   Metadata, newest first, and the row makers. A request arriving between
   steps is served before the next; one arriving during a step waits for that step alone: most
   take under 5 ms, a data-path version 3-8 ms, the longest about 20 ms (the log package).

About 220 ms of CPU (the data path's versions about 40 more), once per process: a second
server in the same process (a test suite's) only makes its coordinator. Nothing is loaded
ahead under trio's MockClock (tests on a virtual clock load on first use, as every server did
before): while a task waits in ``wait_all_tasks_blocked`` trio does not autojump the clock.
``MODULES`` is only an order: a module missing from it is still imported, by whatever needs
it, in a larger step.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

# trio.testing's own names for these import pytest (0.35, about 90 ms); this is where they live,
# a private module, so a trio that moves them still works through the public names
try:
    from trio._core import MockClock, wait_all_tasks_blocked  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover -- another trio's layout
    from trio.testing import MockClock, wait_all_tasks_blocked
from trio.lowlevel import current_clock

from ..frozen import compile_init

log = logging.getLogger("kafka_emu")

# How long the server must have been idle before the group path (1 ms: at once, as a rule
# before a client's first group request) and before each later step (20 ms: not in the short
# gaps of a client's burst of requests, whose next request would wait for the step)
IDLE_S = 0.001
REST_IDLE_S = 0.02

# The modules in the order Python finishes importing them (``-X importtime``): those up to
# ``GROUP_MODULES_END`` in one go (``group_path``; about 65 ms, of which the KIP-848 package,
# ``coordinator.consumer``, 25 and the share groups' 8, which the coordinator imports whatever
# the group type), the rest one per later step, so that a step runs about one module's own
# body; the log package (the first Metadata's) is preceded by what the crc32c binding imports
# (importlib.metadata, email: about 15 ms).
MODULES = (
    "kafka_emu.broker.events",
    "kafka_emu.broker.handlers._common",
    "kafka_emu.broker.handlers._operations",
    "kafka_emu.coordinator.state",
    "kafka_emu.coordinator.events",
    "kafka_emu.coordinator.results",
    "kafka_emu.coordinator.group",
    "kafka_emu.coordinator.offsets_store",
    "kafka_emu.coordinator.timers",
    "kafka_emu.coordinator.core",
    "kafka_emu.coordinator.rebalance",
    "kafka_emu.coordinator.admin",
    "re2",
    "kafka_emu.coordinator.join",
    "kafka_emu.coordinator.offsets",
    "kafka_emu.coordinator.consumer",
    "kafka_emu.coordinator.membership",
    "kafka_emu.coordinator.operator",
    "kafka_emu.coordinator.coordinator",
    "encodings.utf_16_be",  # members are ordered as Java orders strings (by UTF-16 units)
    "encodings.utf_16_le",  # a commit's metadata is measured as Java measures it
    "kafka_emu.broker.cluster",
    "zipfile",
    "email.message",
    "importlib.metadata",
    "kafka_emu.log.crc",
    "crc32c",  # (kafka_emu.log.crc imports it at the first batch: a first Produce paid for it)
    "kafka_emu.log",
)

# the packages whose classes a request builds (commands, results, events, messages)
WITH_CLASSES = ("kafka_emu.coordinator.", "kafka_emu.broker.handlers.",
                 "kafka_emu.protocol.messages.", "kafka_emu.broker.events")

# api keys, in the order a consumer uses them: the group path first, then metadata and data
GROUP_KEYS = (18, 10, 11, 14, 12, 9, 8, 13)
# what a consumer sends until its group is formed and it knows where to start (FindCoordinator,
# JoinGroup, SyncGroup, Heartbeat, OffsetFetch): the group path's, in one go. ApiVersions (the
# first request: its handler loads with the server), OffsetCommit and LeaveGroup (sent later,
# after the first 20 ms gap) come first in the later steps
FORMING_KEYS = (10, 11, 14, 12, 9)
DATA_KEYS = (3, 0, 1, 2, 22)
# beside each group API's newest version (Java 4.x clients'), the versions the other clients
# of the day send, compiled with the group path: librdkafka 2.16's (captured from
# confluent-kafka's requests: ApiVersions v3, FindCoordinator v2, JoinGroup v5, SyncGroup v3,
# Heartbeat v3, OffsetFetch v9, LeaveGroup v1) and Java 3.x's (FindCoordinator v4, OffsetFetch
# v8, OffsetCommit v8-9; its JoinGroup, SyncGroup and Heartbeat are the newest)
FIRST_VERSIONS = {18: (3,), 10: (2, 4), 11: (5,), 14: (3,), 12: (3,), 9: (8, 9), 8: (8, 9),
                  13: (1,)}
CODEC_BATCH = 4  # versions compiled per later step (3-5 ms)
# whose codec functions are compiled for every version served (about 0.8 ms each, 50 ms in
# all); the data path's are not (Fetch's 15 versions alone would be 40 ms, Produce's 11 17 ms:
# mostly versions no client of the day sends) ...
CODEC_KEYS = GROUP_KEYS + (3,)
# ... but these are, in later steps ahead of the group path's other versions: the data path's
# versions the clients of the day send (captured from each client's requests: librdkafka 2.16
# Produce v10, Fetch v16, ListOffsets v7; kafka-python 3.0 v9, v12, v11; kafkajs 2.2 and aiokafka
# 0.14 v7, v11, v3; @platformatic/kafka v11, v17, v9; Java 4.x and franz-go the newest; an
# idempotent producer's InitProducerId: librdkafka and kafka-python v4, aiokafka v0). Left to
# first use, a fresh emulator's first Produce paid about 2.5 ms and its first consumer's
# ListOffsets and Fetch about 4 ms, with every connection waiting meanwhile
DATA_VERSIONS = {0: (10, 9, 7, 11, 12, 13), 1: (16, 12, 11, 17, 18), 2: (7, 11, 3, 9, 10),
                 22: (4, 0, 5)}

# the last of MODULES the group path needs (the rest: the log package, for Metadata and data)
GROUP_MODULES_END = "encodings.utf_16_le"

_warmed = False  # this process has loaded all of it (a later server only makes its coordinator)


def group_path(observed: bool = True) -> None:
    """What a first group needs, loaded in one go: the coordinator's modules, the handlers and
    declarations of the requests that form a group (``FORMING_KEYS``), the compiled ``__init__`` of their classes, the codec's
    functions for the versions the clients of the day send (``FIRST_VERSIONS`` and each API's
    newest; the others follow in ``later_steps``) and, if anything observes (``observed``), the
    RequestHandled row makers of the group path. About 100 ms."""
    from .handlers import HANDLERS
    for name in MODULES[:MODULES.index(GROUP_MODULES_END) + 1]:
        if name not in sys.modules:
            importlib.import_module(name)
    keys = [key for key in FORMING_KEYS if key in HANDLERS]
    for key in keys:
        HANDLERS[key]  # noqa: B018 - imports the handler and its declarations
    _compile_all_inits()
    from ..protocol.headers import warm as warm_codec
    for key in keys:
        handler = HANDLERS[key]
        for version in sorted({max(handler.supported), *FIRST_VERSIONS.get(key, ())}):
            if version in handler.supported:
                warm_codec(handler.api, version)
    if observed:
        _make_row_makers(keys)


def later_steps() -> Iterator[None]:
    """The rest, one step (a few ms at most) per iteration: the data path's modules, handlers
    and declarations, their classes' ``__init__``, the data path's codec for the versions the
    clients of the day send (``DATA_VERSIONS``, one a step), the other versions of the group
    path and Metadata (newest first, ``CODEC_BATCH`` a step), and the row makers."""
    from ..protocol.headers import warm as warm_codec
    from .handlers import HANDLERS
    for name in MODULES:
        if name not in sys.modules:
            importlib.import_module(name)
            yield
    keys = [key for key in GROUP_KEYS + DATA_KEYS if key in HANDLERS]
    for key in keys:
        HANDLERS[key]  # noqa: B018 - imports the handler and its declarations
        yield
    _compile_all_inits()  # (those of the modules loaded since the group path: a few ms)
    yield
    for key, versions in DATA_VERSIONS.items():
        handler = HANDLERS.get(key)
        for version in versions:
            if handler is not None and version in handler.supported:
                warm_codec(handler.api, version)  # one a step (a Fetch version 3-8 ms)
                yield
    for key in CODEC_KEYS:
        if key in HANDLERS:
            handler = HANDLERS[key]
            versions = sorted(handler.supported, reverse=True)  # newest first
            for at in range(0, len(versions), CODEC_BATCH):
                for version in versions[at:at + CODEC_BATCH]:
                    warm_codec(handler.api, version)
                yield
    _make_row_makers(keys)  # (about 0.3 ms each)
    yield


def _with_classes() -> list[str]:
    return [name for name in sys.modules if name.startswith(WITH_CLASSES)]


def _compile_all_inits() -> None:
    for name in _with_classes():
        _compile_inits(sys.modules[name])


def _make_row_makers(keys: Any) -> None:
    """What observing a request compiles at its first (the Python runners' timeline, a control
    endpoint's, a trace): its RequestHandled row maker, and a parked one's (event_rows.py,
    request_facts.py)."""
    from .event_rows import request_row_maker
    from .handlers import HANDLERS
    from .request_facts import RequestFacts
    for key in keys:
        api = HANDLERS[key].api
        request_row_maker(api.request, api.response)
        if key in GROUP_KEYS:
            request_row_maker(RequestFacts, api.response)


def _compile_inits(module: Any) -> None:
    """The cheaper ``__init__`` of each class of ``module`` still waiting for its first
    instance (kafka_emu/frozen.py: ``fast_init`` puts a stub there, which compiles the real one
    when first called, about 0.1-0.3 ms; the stub is the one ``__init__`` with ``__wrapped__``).
    What the stub would do, done now: compiled, or else attrs' own."""
    for cls in list(vars(module).values()):
        if not isinstance(cls, type) or cls.__module__ != module.__name__:
            continue
        stub = cls.__dict__.get("__init__")
        original = getattr(stub, "__wrapped__", None)
        if original is None:
            continue
        compile_init(cls)
        if cls.__dict__.get("__init__") is stub:  # not reproducible: attrs' own, as the stub does
            cls.__init__ = original


def warmed(broker: Any) -> bool:
    """Whether everything is loaded: this process's share and ``broker``'s coordinator."""
    return _warmed and "coordinator" in broker.__dict__


async def warm_up(broker: Any) -> None:
    """Once the server is first idle: the group path in one go and the broker's coordinator;
    then the rest in steps, each once the server is idle again. A step that raises is a bug:
    recorded as unexpected (the test fixture re-raises those), and the rest is left to first
    use, as it was before."""
    global _warmed
    if isinstance(current_clock(), MockClock):
        # a test on the virtual clock: nothing ahead of use. While a task waits in
        # wait_all_tasks_blocked, trio (0.35) does not autojump the clock, and the steps would
        # interleave with the test's own events
        return
    try:
        await wait_all_tasks_blocked(IDLE_S)
        if not _warmed:
            group_path(observed=broker.observation.emit is not None)
        broker.coordinator  # noqa: B018 - made now rather than by the first group request
        if not _warmed:
            await wait_all_tasks_blocked(REST_IDLE_S)
            for _ in later_steps():  # (each step runs at a next(): after a wait)
                await wait_all_tasks_blocked(REST_IDLE_S)
            _warmed = True
    except OSError as exc:
        # the process is out of file descriptors (clients hold them all) or the disk fails
        # under an import: not a bug. Python drops a module whose import failed, so what was
        # not loaded loads on first use, as it did before warm-up existed
        log.warning("loading ahead of use stopped (%s); the rest loads on first use", exc)
    except Exception as exc:  # noqa: BLE001 - recorded, as the server records its bugs
        log.exception("loading ahead of use failed; the rest loads on first use")
        broker.record_unexpected(exc)
