"""Reusable by users: run the emulator in-process, pytest fixtures, hypothesis strategies.

Names are imported lazily so that the pytest plugin and the hypothesis strategies can be loaded
without starting to import the broker (and trio).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from .emulator import (AsyncEmulator, ControlError, Emulator, EmulatorError, WaitTimeout,
                           make_config, open_emulator, run_in_thread)

__all__ = ["AsyncEmulator", "ControlError", "Emulator", "EmulatorError", "WaitTimeout",
           "make_config", "open_emulator", "run_in_thread"]
_EMULATOR_NAMES = frozenset(__all__)


def __getattr__(name: str) -> Any:
    if name in _EMULATOR_NAMES:
        from . import emulator
        return getattr(emulator, name)
    raise AttributeError(name)
