"""Run kafka-emu inside a program: a background thread for any code, or a trio task.

``with run_in_thread() as emu:`` suits synchronous code and every event loop (kafka-python,
confluent-kafka, aiokafka): the emulator runs its own trio loop in a daemon thread.
``async with open_emulator() as emu:`` suits trio code and runs in the caller's nursery.
Both hand back an :class:`Emulator` and both re-raise, on exit, any unexpected exception the
server hit (a bug in kafka-emu), so it fails the test that caused it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

import trio

from .. import coordinator as c
from ..broker.config import BrokerConfig
from ..broker.server import BoundAddress, host_port, serve


class EmulatorError(RuntimeError):
    """kafka-emu hit unexpected exceptions while serving (see __cause__ / .errors)."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__(f"kafka-emu hit {len(errors)} unexpected error(s): {errors[0]!r}")
        self.errors = errors


def make_config(settings: Mapping[str, Any] | None = None, *, topics: Mapping[str, int] | None = None,
                host: str = "127.0.0.1", port: int = 0) -> BrokerConfig:
    """A BrokerConfig from Kafka config names, e.g. {"group.initial.rebalance.delay.ms": 3000}."""
    return BrokerConfig.from_kafka({k: str(v) for k, v in (settings or {}).items()}, host=host,
                                   port=port, topics=tuple((topics or {}).items()))


class Emulator:
    """A running emulator: where it listens, how it is configured, and what its groups are."""

    def __init__(self, bound: BoundAddress, config: BrokerConfig,
                 call: Callable[[Callable[[], Any]], Any], *, control: Any = None) -> None:
        self._bound = bound
        # the HTTP control endpoint's base URL (http://host:port), if one was asked for
        self.control_url: str | None = None if control is None else control.url
        self._call = call  # runs a function on the emulator's trio thread
        self.config = config
        self.host = bound.host
        self.port = bound.port

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's bootstrap setting (IPv6 in brackets: ``[::1]:port``)."""
        return host_port(self.host, self.port)

    @property
    def broker(self):
        """The live broker state (only safe to touch from the emulator's own trio thread)."""
        return self._bound.broker

    def list_groups(self, states: tuple[str, ...] = (), types: tuple[str, ...] = ()):
        """ListGroups as values: a tuple of ListedGroup(group_id, protocol_type, state, ...)."""
        def run():
            b = self._bound.broker
            cmd = c.ListGroups(request_id=b.new_request_id(), states_filter=tuple(states),
                               types_filter=tuple(types))
            return b.query(cmd).groups
        return self._call(run)

    def describe_group(self, group_id: str):
        """DescribeGroups for one group as a value (state "Dead" if it does not exist)."""
        def run():
            b = self._bound.broker
            cmd = c.DescribeGroups(request_id=b.new_request_id(), group_ids=(group_id,),
                                   not_found_is_error=False)
            return b.query(cmd).groups[0]
        return self._call(run)

    def describe_consumer_group(self, group_id: str):
        """ConsumerGroupDescribe (KIP-848) for one group as a value: epochs, state, and per member
        its epoch and (topic, partitions) assignment and target."""
        from ..coordinator.consumer import ConsumerGroupDescribe

        def run():
            b = self._bound.broker
            cmd = ConsumerGroupDescribe(request_id=b.new_request_id(), group_ids=(group_id,))
            return b.query(cmd).groups[0]
        return self._call(run)

    def create_topic(self, name: str, partitions: int = 1) -> None:
        self._call(lambda: self._bound.broker.topics.create(name, partitions))

    # -- faults (control/faults.py; the operations of control/ops/faults.py) ------------------
    def _fault_op(self, name: str, **raw: Any) -> Any:
        from ..control.operations import all_operations, parse_params
        op = all_operations()[name]
        params = parse_params(op, {k: v for k, v in raw.items() if v is not None})
        return self._call(lambda: op.run(self._bound.broker, params))

    def add_fault(self, action: str, *, api: str | int | None = None,
                  min_version: int | None = None, max_version: int | None = None,
                  client_id: str | None = None, group_id: str | None = None,
                  member_id: str | None = None, topic: str | None = None,
                  error: str | int | None = None, message: str | None = None,
                  delay_ms: int | None = None, throttle_ms: int | None = None, count: int = 1,
                  always: bool = False, skip: int = 0, probability: float | None = None,
                  seed: int = 0) -> int:
        """Add a fault rule (see control/faults.py); returns its id. E.g.
        ``emu.add_fault("error", api="OffsetCommit", group_id="g", error="REBALANCE_IN_PROGRESS")``.
        Bad input raises ControlError and adds nothing."""
        rule = self._fault_op(
            "add_fault", action=action, api=api, min_version=min_version,
            max_version=max_version, client_id=client_id, group_id=group_id,
            member_id=member_id, topic=topic, error=error, message=message, delay_ms=delay_ms,
            throttle_ms=throttle_ms, count=count, always=always, skip=skip,
            probability=probability, seed=seed)
        return rule["id"]

    def faults(self) -> list[dict]:
        """The fault rules, in the order they apply, with how often each matched and fired."""
        return self._fault_op("list_faults")

    def remove_fault(self, rule_id: int) -> dict:
        """Remove one fault rule (ControlError, status 404, if there is none with that id)."""
        return self._fault_op("remove_fault", rule_id=rule_id)

    def clear_faults(self) -> int:
        """Remove every fault rule; returns how many there were."""
        return self._fault_op("clear_faults")["removed"]
    # -- end of faults ------------------------------------------------------------------------

    def unexpected_errors(self) -> list[BaseException]:
        return self._call(lambda: list(self._bound.broker.unexpected))


async def _start_control(nursery: trio.Nursery, bound: BoundAddress, host: str,
                         port: int | None):
    """The HTTP control endpoint's ControlAddress, or None when no port was asked for."""
    if port is None:
        return None
    from ..control.http import serve_control
    return await nursery.start(partial(serve_control, bound.broker, host, port))


def _raise_unexpected(errors: list[BaseException]) -> None:
    if errors:
        raise EmulatorError(errors) from errors[0]


def _trace_writer(trace_dir, labels, compress):
    """An opened TraceWriter when tracing is asked for (raises TraceError at once if the
    directory cannot be written), else None."""
    if trace_dir is None:
        return None
    from ..trace.writer import TraceWriter, parse_labels
    return TraceWriter(trace_dir, labels=parse_labels(
        labels.items() if isinstance(labels, Mapping) else labels), compress=compress).open()


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
    writer = _trace_writer(trace_dir, trace_labels, trace_compress)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            box["bound"] = await nursery.start(partial(serve, config, observer=observer))
            if writer is not None:
                writer.attach(box["bound"].broker, nursery, config)
            box["control"] = await _start_control(nursery, box["bound"], control_host,
                                                  control_port)
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

    def call(fn):
        return trio.from_thread.run_sync(fn, trio_token=token)

    emulator = Emulator(box["bound"], config, call, control=box["control"])
    try:
        yield emulator
    finally:
        errors = emulator.unexpected_errors() if thread.is_alive() else []
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(box["scope"].cancel, trio_token=token)
        thread.join(timeout=10)
        if writer is not None:
            writer.close()
    _raise_unexpected(errors)
    if "error" in box:
        raise box["error"]


@contextlib.asynccontextmanager
async def open_emulator(config: BrokerConfig | None = None, *,
                        observer: Callable[[Any], None] | None = None,
                        control_port: int | None = None, control_host: str = "127.0.0.1",
                        trace_dir: str | None = None,
                        trace_labels: Mapping[str, str] | None = None,
                        trace_compress: str | None = None):
    """Start kafka-emu as a task of the calling trio program; stop it on exit (control and
    tracing as in ``run_in_thread``)."""
    config = config or make_config()
    writer = _trace_writer(trace_dir, trace_labels, trace_compress)
    try:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(partial(serve, config, observer=observer))
            if writer is not None:
                writer.attach(bound.broker, nursery, config)
            control = await _start_control(nursery, bound, control_host, control_port)
            emulator = Emulator(bound, config, lambda fn: fn(), control=control)
            try:
                yield emulator
            finally:
                nursery.cancel_scope.cancel()
    finally:
        if writer is not None:
            writer.close()
    _raise_unexpected(list(bound.broker.unexpected))
