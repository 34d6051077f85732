"""Loading what a first group needs while the server is idle, so that no request pays for it.

A start is cheap because the coordinator, the handlers, the message declarations and the codec
plans load on first use (lazy_table.py, codegen.py). Left at that, the first JoinGroup of a
fresh emulator paid for most of them at once -- about 50 ms of server CPU against 0.5 for a
later one, during which every other connection waits, as the server is one thread (issue 40).
So once the listener is open, ``warm_up`` loads them ahead of use, in steps, each run only when
the whole server has been idle for ``IDLE_S`` (trio's ``wait_all_tasks_blocked``: every task
waits, and no socket has become ready meanwhile). A request arriving between steps is served
before the next; one arriving during a step waits for that step alone: most take under 5 ms
(the modules are imported bottom-up, so a step runs about one module's own body), the longest
about 30 ms (the KIP-848 package, whose ``__init__`` imports its modules).

What is loaded, in the order a consumer uses it: the modules of the group coordinator, the
handlers and declarations of the group path (ApiVersions, FindCoordinator, JoinGroup,
SyncGroup, Heartbeat, OffsetFetch, OffsetCommit, LeaveGroup), then of Metadata and the data
path (Produce, Fetch, ListOffsets, InitProducerId, and the log package); the compiled
``__init__`` of their classes (frozen.py); the codec's functions for every version of the group
path and Metadata, newest first; the functions that make their RequestHandled rows (made at
each API's first request while anything observes: the Python runners' timeline, a control
endpoint's, a trace); last, the broker's coordinator. About 220 ms of CPU, once per
process: a second server in the same process (a test suite's) only makes its coordinator.

It never runs where the server is not idle: a task that wakes more often than every ``IDLE_S``
holds it off, and under trio's MockClock with autojump the clock jumps before the server
counts as idle, so tests on a virtual clock load on first use, as every server did before.
``MODULES`` is only an order: a module missing from it is still imported, by whatever needs
it, in a larger step.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

# trio.testing's own name for it imports pytest (0.35, about 90 ms); this is where it lives,
# a private module, so a trio that moves it still works through the public name
try:
    from trio._core import wait_all_tasks_blocked
except ImportError:  # pragma: no cover -- another trio's layout
    from trio.testing import wait_all_tasks_blocked

from ..frozen import compile_init

log = logging.getLogger("kafka_emu")

IDLE_S = 0.001  # how long the server must have been idle before each step
# ... and before the first: a client that connects as the address is printed is answered by a
# server still as lazy as before (tests/protocol/test_api_index.py checks that start)
FIRST_IDLE_S = 0.02

# The modules in the order Python finishes importing them (``-X importtime``), so that importing
# each in turn runs about one module's own body per step. A package's ``__init__`` runs before
# any of its modules, so ``coordinator.consumer`` (KIP-848, imported by the coordinator) is one
# step of about 30 ms; the log package (the first Metadata's) is preceded by what the crc32c
# binding imports (importlib.metadata, email: about 15 ms).
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
    "kafka_emu.log",
)

# the packages whose classes a request builds (commands, results, events, messages)
WITH_CLASSES = ("kafka_emu.coordinator.", "kafka_emu.broker.handlers.",
                 "kafka_emu.protocol.messages.", "kafka_emu.broker.events")

# api keys, in the order a consumer uses them: the group path first, then metadata and data
GROUP_KEYS = (18, 10, 11, 14, 12, 9, 8, 13)
DATA_KEYS = (3, 0, 1, 2, 22)
# whose codec functions are compiled for every version served (about 0.8 ms each, 50 ms in
# all); the data path's are left to first use, a ms or two each (Fetch's 14 versions alone
# would be 24 ms, Produce's 11: mostly versions no client of the day sends)
CODEC_KEYS = GROUP_KEYS + (3,)

_warmed = False  # this process has loaded all of it (a later server only makes its coordinator)


def steps() -> Iterator[None]:
    """The process-wide loading, one step (a few ms at most) per iteration."""
    from ..protocol.headers import warm as warm_codec
    from .handlers import HANDLERS
    from .event_rows import request_row_maker
    from .request_facts import RequestFacts
    for name in MODULES:
        if name not in sys.modules:
            importlib.import_module(name)
            yield
    keys = [key for key in GROUP_KEYS + DATA_KEYS if key in HANDLERS]
    for key in keys:
        HANDLERS[key]  # noqa: B018 - imports the handler and its declarations
        yield
    for name in [name for name in sys.modules if name.startswith(WITH_CLASSES)]:
        _compile_inits(sys.modules[name])
        yield
    for key in CODEC_KEYS:
        if key in HANDLERS:
            handler = HANDLERS[key]
            for version in sorted(handler.supported, reverse=True):  # newest first
                warm_codec(handler.api, version)
                yield
    # what observing a request compiles at its first (the Python runners' timeline, a control
    # endpoint's, a trace): its RequestHandled row maker, and a parked one's (event_rows.py,
    # request_facts.py)
    for key in keys:
        api = HANDLERS[key].api
        request_row_maker(api.request, api.response)
        if key in GROUP_KEYS:
            request_row_maker(RequestFacts, api.response)
        yield


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
    """Run the steps, each once the server is idle; then make the broker's coordinator.
    A step that raises is a bug: recorded as unexpected (the test fixture re-raises those),
    and the rest is left to first use, as it was before."""
    global _warmed
    try:
        if not _warmed:
            await wait_all_tasks_blocked(FIRST_IDLE_S)
            for _ in steps():  # (the first step runs at the first next(): after the wait)
                await wait_all_tasks_blocked(IDLE_S)
            _warmed = True
        await wait_all_tasks_blocked(IDLE_S)
        broker.coordinator  # noqa: B018 - made now rather than by the first group request
    except Exception as exc:  # noqa: BLE001 - recorded, as the server records its bugs
        log.exception("loading ahead of use failed; the rest loads on first use")
        broker.record_unexpected(exc)
