"""Where kafka-emu keeps what it builds or installs once per machine: ``$KAFKA_EMU_CACHE``, else
``$XDG_CACHE_HOME/kafka-emu``, else ``~/.cache/kafka-emu``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("KAFKA_EMU_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kafka-emu")
    return Path(base)
