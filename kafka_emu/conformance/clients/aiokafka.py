"""Verifiable consumer/producer on aiokafka (asyncio).

    python -m kafka_emu.conformance.clients.aiokafka --consumer --topic T --group-id G \
        --bootstrap-server HOST:PORT [...]

A real consumer loop: ``subscribe(listener=ConsumerRebalanceListener)`` (aiokafka's rebalance
listener, awaited by its coordinator before and after each rebalance), ``getmany`` in a loop and
an awaited ``commit`` of each poll's offsets unless auto-commit is on, as Kafka's
VerifiableConsumer does. SIGTERM ends the loop through the event loop's signal handler.
"""

from __future__ import annotations

import asyncio
import signal

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.structs import OffsetAndMetadata

from kafka_emu.conformance import contract
from kafka_emu.conformance.contract import Events, log

POLL_MS = 100

_ASSIGNORS = {
    "range": ("aiokafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("aiokafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("aiokafka.coordinator.assignors.sticky.sticky_assignor",
               "StickyPartitionAssignor"),
}


def _assignor(name: str):
    if name not in _ASSIGNORS:
        raise SystemExit(f"aiokafka has no assignor {name!r} (known: {', '.join(_ASSIGNORS)})")
    module, cls = _ASSIGNORS[name]
    return getattr(__import__(module, fromlist=[cls]), cls)


def _kwargs(properties: dict[str, str], allowed: set[str], typed: dict[str, type]) -> dict:
    out = {}
    for key, value in properties.items():
        name = key.replace(".", "_")
        if name not in allowed:
            log(f"aiokafka: ignoring unknown config {key}")
            continue
        kind = typed.get(name, str)
        out[name] = (value.lower() == "true") if kind is bool else kind(value)
    return out


_INT_CONFIGS = {"heartbeat_interval_ms", "session_timeout_ms", "max_poll_interval_ms",
                "rebalance_timeout_ms", "request_timeout_ms", "retry_backoff_ms",
                "fetch_max_wait_ms", "auto_commit_interval_ms", "max_poll_records",
                "metadata_max_age_ms", "linger_ms", "fetch_min_bytes", "fetch_max_bytes",
                "max_partition_fetch_bytes", "connections_max_idle_ms"}


def _consumer_kwargs(properties: dict[str, str]) -> dict:
    import inspect
    allowed = set(inspect.signature(AIOKafkaConsumer).parameters) - {"topics", "loop"}
    return _kwargs(properties, allowed, {n: int for n in _INT_CONFIGS})


class _Listener(ConsumerRebalanceListener):
    """aiokafka calls the listener from its coordinator task, concurrently with the loop: the
    lock makes a revocation wait until the poll being processed is committed, as the Java
    client's listener (called inside poll) never overlaps the application's commit."""

    def __init__(self, events: Events, lock: asyncio.Lock) -> None:
        self.events = events
        self.lock = lock

    async def on_partitions_revoked(self, revoked):
        async with self.lock:
            self.events.partitions("partitions_revoked",
                                   [(tp.topic, tp.partition) for tp in revoked])

    async def on_partitions_assigned(self, assigned):
        self.events.partitions("partitions_assigned",
                               [(tp.topic, tp.partition) for tp in assigned])


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def consumer(args, events: Events) -> None:
    stop = _stop_event()
    kwargs = {
        "bootstrap_servers": args.bootstrap,
        "group_id": args.group_id,
        "enable_auto_commit": args.enable_autocommit,
        "auto_offset_reset": args.reset_policy,
        "session_timeout_ms": args.session_timeout,
        "partition_assignment_strategy": tuple(_assignor(n) for n in args.assignors),
    }
    if args.group_instance_id:
        kwargs["group_instance_id"] = args.group_instance_id
    kwargs.update(_consumer_kwargs(args.properties))
    c = AIOKafkaConsumer(**kwargs)
    consumed = 0
    events.emit("startup_complete")
    try:
        await c.start()
        lock = asyncio.Lock()
        c.subscribe([args.topic], listener=_Listener(events, lock))
        while not stop.is_set() and (args.max_messages < 0 or consumed < args.max_messages):
            try:
                polled = await c.getmany(timeout_ms=POLL_MS)
            except Exception as exc:  # as Kafka's VerifiableConsumer: an error ends the loop
                log(f"getmany failed, stopping: {exc!r}")
                break
            async with lock:
                # records of partitions revoked since getmany returned are not processed: the
                # new owner reads them from the committed offset
                owned = c.assignment()
                batches = {(tp.topic, tp.partition): [r.offset for r in records]
                           for tp, records in polled.items() if tp in owned}
                batches = contract.limit(batches, consumed, args.max_messages)
                consumed += events.records_consumed(batches)
                if batches and not args.enable_autocommit:
                    await _commit(c, {tp: offs[-1] + 1 for tp, offs in batches.items() if offs},
                                  events)
    finally:
        await c.stop()
        events.emit("shutdown_complete")


async def _commit(c, offsets: dict[tuple[str, int], int], events: Events) -> None:
    try:
        await c.commit({TopicPartition(t, p): OffsetAndMetadata(off, "")
                        for (t, p), off in offsets.items()})
    except Exception as exc:  # CommitFailedError, IllegalStateError, a coordinator error, ...
        events.offsets_committed(offsets, error=f"{type(exc).__name__}: {exc}")
        return
    events.offsets_committed(offsets)


async def producer(args, events: Events) -> None:
    stop = _stop_event()
    p = AIOKafkaProducer(bootstrap_servers=args.bootstrap,
                         acks="all" if args.acks == -1 else args.acks, linger_ms=5)
    prefix = f"{args.value_prefix}." if args.value_prefix is not None else ""
    await p.start()
    events.emit("startup_complete")
    pending = []

    async def send(value: str) -> None:
        try:
            md = await (await p.send(args.topic, value=value.encode()))
        except Exception as exc:
            events.emit("producer_send_error", key=None, value=value, topic=args.topic,
                        exception=type(exc).__name__, message=str(exc))
            return
        events.emit("producer_send_success", key=None, value=value, topic=md.topic,
                    partition=md.partition, offset=md.offset)

    i = 0
    interval = 1.0 / args.throughput if args.throughput > 0 else 0.0
    while not stop.is_set() and (args.max_messages < 0 or i < args.max_messages):
        pending.append(asyncio.ensure_future(send(f"{prefix}{i}")))
        i += 1
        await asyncio.sleep(interval)
    await asyncio.gather(*pending)
    await p.stop()
    events.emit("shutdown_complete")


def main(argv: list[str] | None = None) -> int:
    mode, args = contract.parse(argv, "aiokafka verifiable client")
    asyncio.run((consumer if mode == "consumer" else producer)(args, Events()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
