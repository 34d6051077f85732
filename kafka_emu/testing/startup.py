"""What both runners (the thread and the in-trio one) do around the server: start the HTTP
control endpoint and the trace writer when asked for, and turn the server's unexpected
exceptions (bugs in kafka-emu) into one ``EmulatorError`` on exit."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import trio

from ..broker.server import BoundAddress


class EmulatorError(RuntimeError):
    """kafka-emu hit unexpected exceptions while serving (see __cause__ / .errors)."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__(f"kafka-emu hit {len(errors)} unexpected error(s): {errors[0]!r}")
        self.errors = errors



async def start_control(nursery: trio.Nursery, bound: BoundAddress, host: str,
                         port: int | None) -> Any:
    """The HTTP control endpoint's ControlAddress, or None when no port was asked for."""
    if port is None:
        return None
    from ..control.http import serve_control
    return await nursery.start(partial(serve_control, bound.broker, host, port))


def raise_unexpected(errors: list[BaseException]) -> None:
    if errors:
        raise EmulatorError(errors) from errors[0]


def trace_writer(trace_dir: str | None, labels: Any, compress: str | None) -> Any:
    """An opened TraceWriter when tracing is asked for (raises TraceError at once if the
    directory cannot be written), else None."""
    if trace_dir is None:
        return None
    from ..trace.writer import TraceWriter, parse_labels
    return TraceWriter(trace_dir, labels=parse_labels(
        labels.items() if isinstance(labels, Mapping) else labels), compress=compress).open()
