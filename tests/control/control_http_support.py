"""Shared by the control endpoint tests: an endpoint serving a custom table, and the generic
"what every operation looks like over HTTP" helpers (dummy path values, a state digest), and
the token every request but /health sends."""

from __future__ import annotations

import time

import contextlib
import threading
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any
from urllib.parse import quote

import httpx
import trio

from kafka_emu.control.http import serve_control
from kafka_emu.control.openapi import path_params
from kafka_emu.control.operations import Operation, all_operations
from kafka_emu.testing.emulator import open_emulator


TOKEN = "test-token-for-endpoint-for"  # endpoint_for's endpoints take this one
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def client_of(emu: Any, **options: Any) -> httpx.Client:
    """An httpx client of ``emu``'s control endpoint that sends its token."""
    return httpx.Client(base_url=emu.control_url, headers=auth(emu.control_token),
                        timeout=30, **options)


@contextlib.contextmanager
def endpoint_for(operations: Mapping[str, Operation] | None = None,
                 **serve_options: Any) -> Iterator[tuple[str, Any, list]]:
    """An emulator in a thread whose control endpoint serves ``operations`` only (the whole
    table when None), with the token TOKEN (send AUTH) unless ``serve_options`` say otherwise.

    Yields (base URL, the broker, the broker's unexpected-error list as seen at exit)."""
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        try:
            async with open_emulator() as emu:
                async with trio.open_nursery() as nursery:
                    address = await nursery.start(partial(
                        serve_control, emu.broker, operations=operations,
                        **{"token": TOKEN, **serve_options}))
                    box.update(url=address.url, broker=emu.broker,
                               token=trio.lowlevel.current_trio_token(),
                               scope=nursery.cancel_scope)
                    ready.set()
                    await trio.sleep_forever()
                # the fixture-style re-raise would hide what the test wants to look at
                box["unexpected"] = list(emu.broker.unexpected)
                emu.broker.unexpected.clear()
        finally:
            ready.set()

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    ready.wait(10)
    assert "url" in box, "the control endpoint did not start"
    unexpected: list = []
    try:
        yield box["url"], box["broker"], unexpected
    finally:
        trio.from_thread.run_sync(box["scope"].cancel, trio_token=box["token"])
        thread.join(10)
        unexpected.extend(box.get("unexpected", []))


def dummy_path(op: Operation, value_for=lambda name: "no-such-thing") -> str:
    """``op.path`` with every placeholder filled (percent-encoded)."""
    path = op.path
    for name in path_params(op):
        path = path.replace("{" + name + "}", quote(str(value_for(name)), safe=""))
    return path


def digest(client: httpx.Client, operations: Mapping[str, Operation] | None = None) -> dict:
    """The results of every synchronous GET operation that needs no parameter: a picture of
    the emulator's state to compare before and after a request that must change nothing.
    Results that differ between two calls in a row (clocks, counters of the reads themselves)
    are left out, and so is the timeline family: it is a log of everything asked, refused
    operator commands included (as ReplyEmitted with their error), not state."""
    operations = operations or all_operations()
    import attrs
    picture = {}
    for name, op in sorted(operations.items()):
        required = [f for f in attrs.fields(op.params) if f.default is attrs.NOTHING]
        if op.method != "GET" or op.is_async or required:
            continue
        if op.run.__module__.rpartition(".")[2] == "timeline":
            continue
        first = client.get(op.path).json()
        time.sleep(0.01)  # a clock read twice within one millisecond would look like state
        second = client.get(op.path).json()
        if first == second:
            picture[name] = first
    return picture
