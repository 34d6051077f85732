"""``run_in_thread``: kafka-emu in a daemon thread of its own, for synchronous code and every
event loop (kafka-python, confluent-kafka, aiokafka). The emulator runs its own trio loop there;
the :class:`Emulator` handle reaches it with ``trio.from_thread``, so its methods are
thread-safe and block until done -- from inside another trio loop too."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

import trio

from ..broker.config import BrokerConfig
from ..broker.server import serve
from ..control.plane import control_of
from .config import make_config
from .handles import Emulator
from .startup import raise_unexpected, start_control, trace_writer

__all__ = ["run_in_thread"]


def _in_trio_thread() -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


def _from_any_thread(run: Callable[..., Any], fn: Any, token: trio.lowlevel.TrioToken) -> Any:
    """``trio.from_thread.run(_sync)`` that also works from inside another trio loop (a trio
    test using the thread fixture), where trio forbids blocking calls: there a helper thread
    makes the call and this one waits, briefly blocking that loop as any synchronous client
    call in a test would."""
    if _in_trio_thread():
        with concurrent.futures.ThreadPoolExecutor(1) as helper:
            return helper.submit(run, fn, trio_token=token).result()
    return run(fn, trio_token=token)



@contextlib.contextmanager
def run_in_thread(config: BrokerConfig | None = None, *,
                  observer: Callable[[Any], None] | None = None,
                  control_port: int | None = None,
                  control_host: str = "127.0.0.1",
                  trace_dir: str | None = None, trace_labels: Mapping[str, str] | None = None,
                  trace_compress: str | None = None) -> Iterator[Emulator]:
    """Start kafka-emu in a daemon thread; stop it on exit. With ``control_port`` (0 = any free
    port) it also serves the HTTP control endpoint at ``emu.control_url``.

    ``trace_dir`` writes this run's trace file there (see kafka_emu/trace), with
    ``trace_labels`` such as {"client": "aiokafka"} and ``trace_compress="gzip"`` if wanted."""
    config = config or make_config()
    ready = threading.Event()
    box: dict[str, Any] = {}
    writer = trace_writer(trace_dir, trace_labels, trace_compress)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            box["bound"] = bound = await nursery.start(partial(serve, config, observer=observer))
            control_of(bound.broker)  # the timeline records from the first client on
            if writer is not None:
                writer.attach(bound.broker, nursery, config)
            box["control"] = await start_control(nursery, bound, control_host, control_port)
            box["token"] = trio.lowlevel.current_trio_token()
            box["scope"] = nursery.cancel_scope
            ready.set()

    def thread_main() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller's thread
            box["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=thread_main, name="kafka-emu", daemon=True)
    thread.start()
    ready.wait()
    if "bound" not in box or "token" not in box:
        if writer is not None:
            writer.close("failed to start")
        raise RuntimeError("kafka-emu failed to start") from box.get("error")
    token = box["token"]

    def ended(finished: trio.RunFinishedError) -> BaseException:
        """What to raise for a call made after the emulator's loop ended: the error that ended
        it, when one did (else trio's RunFinishedError says only that it has ended)."""
        thread.join(timeout=5)  # (the loop's error is stored as its thread ends)
        error = box.get("error")
        if error is None:
            return finished
        ended_by = RuntimeError(f"kafka-emu's event loop ended on an error: {error!r}")
        ended_by.__cause__ = error
        return ended_by

    def into_loop(run: Callable[..., Any], fn: Callable[[], Any]) -> Any:
        """``fn`` run in the emulator's loop by ``run`` (trio.from_thread's run_sync or run)."""
        try:
            return _from_any_thread(run, fn, token)
        except trio.RunFinishedError as finished:
            raise ended(finished)  # noqa: B904 -- ended() chains the loop's own error

    call = partial(into_loop, trio.from_thread.run_sync)
    acall = partial(into_loop, trio.from_thread.run)
    emulator = Emulator(box["bound"], config, call, acall, control=box["control"])
    try:
        yield emulator
    finally:
        errors = emulator.unexpected_errors() if thread.is_alive() else []
        with contextlib.suppress(trio.RunFinishedError):  # (ended already: nothing to stop)
            _from_any_thread(trio.from_thread.run_sync, box["scope"].cancel, token)
        thread.join(timeout=10)
        if writer is not None:
            writer.close()
    raise_unexpected(errors)
    if "error" in box:
        raise box["error"]
