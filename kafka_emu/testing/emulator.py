"""Run kafka-emu inside a program: a background thread for any code, or a trio task.

``with run_in_thread() as emu:`` suits synchronous code and every event loop (kafka-python,
confluent-kafka, aiokafka): the emulator runs its own trio loop in a daemon thread and hands back
an :class:`Emulator`, whose methods are thread-safe and block until done.
``async with open_emulator() as emu:`` suits trio code and runs in the caller's nursery; it hands
back an :class:`AsyncEmulator`, the same methods, each awaitable.
Both re-raise, on exit, any unexpected exception the server hit (a bug in kafka-emu), so it fails
the test that caused it.

This module gathers the public names; each lives in a module of its own:

- ``config.py``: ``make_config`` (a BrokerConfig from Kafka's config names);
- ``handles.py``: ``Emulator`` and ``AsyncEmulator``, the handles both runners give back;
- ``thread_runner.py``: ``run_in_thread``; ``trio_runner.py``: ``open_emulator``;
- ``startup.py``: what both runners share (control endpoint, trace writer, ``EmulatorError``).
"""

from __future__ import annotations

from ..control.operations import ControlError
from ..control.waiters import WaitTimeout
from .config import make_config
from .handles import AsyncEmulator, Emulator
from .startup import EmulatorError
from .thread_runner import run_in_thread
from .trio_runner import open_emulator

__all__ = ["AsyncEmulator", "ControlError", "Emulator", "EmulatorError", "WaitTimeout",
           "make_config", "open_emulator", "run_in_thread"]
