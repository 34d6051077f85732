"""Verifiable consumer/producer on kafka-python (2.x or 3.x).

    python -m kafka_emu.conformance.clients.kafka_python --consumer --topic T --group-id G \
        --bootstrap-server HOST:PORT [...]

A real consumer loop: ``subscribe(listener=ConsumerRebalanceListener)`` (the library's rebalance
listener, called inside ``poll``), ``poll`` in a loop and a synchronous ``commit`` of each poll's
offsets unless auto-commit is on, as Kafka's VerifiableConsumer does. ``--consumer.config``
properties with Java names are mapped to kafka-python's keyword arguments (dots become
underscores); names kafka-python does not know are reported on stderr and ignored, as Kafka's
own clients ignore unknown configs.
"""

from __future__ import annotations

import logging
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata

from kafka_emu.conformance import contract
from kafka_emu.conformance.contract import Events, StopFlag, log

POLL_MS = 100

_ASSIGNORS = {
    "range": "kafka.coordinator.assignors.range.RangePartitionAssignor",
    "roundrobin": "kafka.coordinator.assignors.roundrobin.RoundRobinPartitionAssignor",
    "sticky": "kafka.coordinator.assignors.sticky.sticky_assignor.StickyPartitionAssignor",
}


def _assignor(name: str):
    path = _ASSIGNORS.get(name)
    if path is None:
        raise SystemExit(f"kafka-python has no assignor {name!r} (known: {', '.join(_ASSIGNORS)})")
    module, _, cls = path.rpartition(".")
    return getattr(__import__(module, fromlist=[cls]), cls)


def _kwargs(properties: dict[str, str], defaults: dict) -> dict:
    """Java config names -> kafka-python keyword arguments, typed like the defaults."""
    out = {}
    for key, value in properties.items():
        name = key.replace(".", "_")
        if name not in defaults:
            log(f"kafka-python: ignoring unknown config {key}")
            continue
        default = defaults[name]
        if isinstance(default, bool):
            out[name] = value.lower() == "true"
        elif isinstance(default, int):
            out[name] = int(value)
        else:
            out[name] = value
    return out


def _offset_and_metadata(offset: int) -> OffsetAndMetadata:
    try:  # kafka-python 3 (and 2.1+) carry the leader epoch
        return OffsetAndMetadata(offset, "", -1)
    except TypeError:
        return OffsetAndMetadata(offset, "")


class _Listener(ConsumerRebalanceListener):
    def __init__(self, events: Events) -> None:
        self.events = events

    def on_partitions_revoked(self, revoked):
        self.events.partitions("partitions_revoked", [(tp.topic, tp.partition) for tp in revoked])

    def on_partitions_assigned(self, assigned):
        self.events.partitions("partitions_assigned",
                               [(tp.topic, tp.partition) for tp in assigned])


def consumer(args, events: Events, stop: StopFlag) -> None:
    kwargs = {
        "bootstrap_servers": args.bootstrap,
        "group_id": args.group_id,
        "enable_auto_commit": args.enable_autocommit,
        "auto_offset_reset": args.reset_policy,
        "session_timeout_ms": args.session_timeout,
        "partition_assignment_strategy": [_assignor(n) for n in args.assignors],
    }
    if args.group_instance_id:
        kwargs["group_instance_id"] = args.group_instance_id
    kwargs.update(_kwargs(args.properties, KafkaConsumer.DEFAULT_CONFIG))
    c = KafkaConsumer(**kwargs)
    consumed = 0
    events.emit("startup_complete")
    try:
        c.subscribe([args.topic], listener=_Listener(events))
        while not stop and (args.max_messages < 0 or consumed < args.max_messages):
            try:
                polled = c.poll(timeout_ms=POLL_MS)
            except Exception as exc:  # as Kafka's VerifiableConsumer: an error ends the loop
                log(f"poll failed, stopping: {exc!r}")
                break
            batches = {(tp.topic, tp.partition): [r.offset for r in records]
                       for tp, records in polled.items()}
            batches = contract.limit(batches, consumed, args.max_messages)
            consumed += events.records_consumed(batches)
            if batches and not args.enable_autocommit:
                if not _commit(c, {tp: offs[-1] + 1 for tp, offs in batches.items() if offs},
                               events):
                    log("fenced (FENCED_INSTANCE_ID), stopping as Kafka's consumer does")
                    break
    finally:
        c.close()
        events.emit("shutdown_complete")


def _commit(c, offsets: dict[tuple[str, int], int], events: Events) -> bool:
    """Commit synchronously and report it; False when the member was fenced (fatal: Kafka's
    VerifiableConsumer rethrows FencedInstanceIdException and stops)."""
    try:
        c.commit({TopicPartition(t, p): _offset_and_metadata(off)
                  for (t, p), off in offsets.items()})
    except Exception as exc:  # CommitFailedError, a KafkaError from the coordinator, ...
        events.offsets_committed(offsets, error=f"{type(exc).__name__}: {exc}")
        return "FencedInstanceId" not in type(exc).__name__
    events.offsets_committed(offsets)
    return True


def producer(args, events: Events, stop: StopFlag) -> None:
    kwargs = {"bootstrap_servers": args.bootstrap, "acks": "all" if args.acks == -1 else args.acks,
              "retries": 0, "linger_ms": 5}
    kwargs.update(_kwargs(args.properties, KafkaProducer.DEFAULT_CONFIG))
    p = KafkaProducer(**kwargs)
    prefix = f"{args.value_prefix}." if args.value_prefix is not None else ""
    events.emit("startup_complete")
    i = 0
    interval = 1.0 / args.throughput if args.throughput > 0 else 0.0
    start = time.monotonic()
    while not stop and (args.max_messages < 0 or i < args.max_messages):
        value = f"{prefix}{i}"
        future = p.send(args.topic, value=value.encode())
        future.add_callback(lambda md, v=value: events.emit(
            "producer_send_success", key=None, value=v, topic=md.topic, partition=md.partition,
            offset=md.offset))
        future.add_errback(lambda exc, v=value: events.emit(
            "producer_send_error", key=None, value=v, topic=args.topic,
            exception=type(exc).__name__, message=str(exc)))
        i += 1
        if interval:
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    p.flush(30)
    p.close()
    events.emit("shutdown_complete")


def main(argv: list[str] | None = None) -> int:
    mode, args = contract.parse(argv, "kafka-python verifiable client")
    # the library's own warnings to stderr (stdout is the event stream)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    stop = StopFlag().install()
    (consumer if mode == "consumer" else producer)(args, Events(), stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
