"""``open_emulator``: kafka-emu as a task of the calling trio program (in its nursery), handing
back an :class:`AsyncEmulator` whose methods are awaited."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from typing import Any

import trio

from ..broker.config import BrokerConfig
from ..broker.server import serve
from ..control.plane import control_of
from .config import make_config
from .handles import AsyncEmulator
from .startup import raise_unexpected, start_control, trace_writer

__all__ = ["open_emulator"]


@contextlib.asynccontextmanager
async def open_emulator(config: BrokerConfig | None = None, *,
                        observer: Callable[[Any], None] | None = None,
                        control_port: int | None = None, control_host: str = "127.0.0.1",
                        trace_dir: str | None = None,
                        trace_labels: Mapping[str, str] | None = None,
                        trace_compress: str | None = None) -> AsyncIterator[AsyncEmulator]:
    """Start kafka-emu as a task of the calling trio program; stop it on exit (control and
    tracing as in ``run_in_thread``). Yields an ``AsyncEmulator``."""
    config = config or make_config()
    writer = trace_writer(trace_dir, trace_labels, trace_compress)
    try:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(partial(serve, config, observer=observer))
            control_of(bound.broker)
            if writer is not None:
                writer.attach(bound.broker, nursery, config)
            control = await start_control(nursery, bound, control_host, control_port)
            emulator = AsyncEmulator(bound, config, control=control)
            try:
                yield emulator
            finally:
                nursery.cancel_scope.cancel()
    finally:
        if writer is not None:
            writer.close()
    raise_unexpected(list(bound.broker.unexpected))
