"""Verifiable consumer/producer on confluent-kafka (librdkafka).

    python -m kafka_emu.conformance.clients.confluent_kafka --consumer --topic T --group-id G \
        --bootstrap-server HOST:PORT [...]

A real consumer loop: ``subscribe`` with ``on_assign``/``on_revoke``/``on_lost`` (the library's
rebalance listener; confluent-kafka assigns/unassigns itself after the callback returns),
``consume`` in a loop, a synchronous commit of each poll's offsets unless auto-commit is on.
Loop and events follow Kafka's VerifiableConsumer (see ``contract.py``); librdkafka reads Java's
config names, so ``--consumer.config`` properties are passed through as they are.

``--group-protocol consumer`` (KIP-848, librdkafka 2.4+): ``group.protocol=consumer``, the
broker's assignor (``group.remote.assignor`` if named), and no ``session.timeout.ms`` /
``heartbeat.interval.ms`` / ``partition.assignment.strategy``, which are broker-side there
(librdkafka refuses them with the consumer protocol). The rebalance callbacks then carry
increments, as with a cooperative assignor, and the events print them as they come.
"""

from __future__ import annotations

import time

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from kafka_emu.conformance import contract
from kafka_emu.conformance.contract import Events, StopFlag, log

POLL_S = 0.1
# Client configs of the classic protocol only: with group.protocol=consumer the broker's
# group.consumer.* configs and assignors apply, and librdkafka refuses these.
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy",
                "group.protocol.type")


def _librdkafka_assignors(names: list[str]) -> str:
    return ",".join(names)


def consumer(args, events: Events, stop: StopFlag) -> None:
    conf = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group_id,
        "enable.auto.commit": args.enable_autocommit,
        "auto.offset.reset": args.reset_policy,
        "enable.partition.eof": False,
    }
    if args.group_protocol == "consumer":
        conf["group.protocol"] = "consumer"
        if args.group_remote_assignor:
            conf["group.remote.assignor"] = args.group_remote_assignor
    else:
        conf["session.timeout.ms"] = args.session_timeout
        conf["partition.assignment.strategy"] = _librdkafka_assignors(args.assignors)
    if args.group_instance_id:
        conf["group.instance.id"] = args.group_instance_id
    conf.update(args.properties)
    if args.group_protocol == "consumer":
        for key in CLASSIC_ONLY:
            if conf.pop(key, None) is not None:
                log(f"ignoring {key}: broker-side with group.protocol=consumer")
    try:
        c = Consumer(conf)
    except KafkaException as exc:
        # librdkafka's early access to KIP-848 (2.4-2.9) still checks max.poll.interval.ms
        # >= session.timeout.ms on the client, against the 45 s default: give it the classic
        # value it checks (the broker's group.consumer.session.timeout.ms is what applies)
        if args.group_protocol != "consumer" or "session.timeout.ms" not in str(exc):
            raise
        log(f"setting session.timeout.ms for librdkafka's client-side check: {exc}")
        poll = int(conf.get("max.poll.interval.ms", 300000))
        c = Consumer({**conf, "session.timeout.ms": min(args.session_timeout, poll)})
    consumed = 0

    def on_assign(_c, partitions):
        events.partitions("partitions_assigned", [(tp.topic, tp.partition) for tp in partitions])

    def on_revoke(_c, partitions):
        events.partitions("partitions_revoked", [(tp.topic, tp.partition) for tp in partitions])

    events.emit("startup_complete")
    try:
        c.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
        while not stop and (args.max_messages < 0 or consumed < args.max_messages):
            msgs = c.consume(num_messages=500, timeout=POLL_S)
            batches: dict[tuple[str, int], list[int]] = {}
            fatal = None
            for m in msgs:
                if m.error():
                    # a fatal error (e.g. FENCED_INSTANCE_ID) arrives as code _FATAL
                    if m.error().fatal() or m.error().code() == KafkaError._FATAL:
                        fatal = m.error()
                        break
                    log(f"consumer error: {m.error()}")
                    continue
                batches.setdefault((m.topic(), m.partition()), []).append(m.offset())
            batches = contract.limit(batches, consumed, args.max_messages)
            consumed += events.records_consumed(batches)
            if batches and not args.enable_autocommit:
                _commit(c, {tp: offs[-1] + 1 for tp, offs in batches.items()}, events)
            if fatal is not None:  # e.g. FENCED_INSTANCE_ID: Kafka's consumer stops too
                log(f"fatal consumer error, stopping: {fatal}")
                break
    finally:
        c.close()
        events.emit("shutdown_complete")


def _commit(c, offsets: dict[tuple[str, int], int], events: Events) -> None:
    tps = [TopicPartition(t, p, off) for (t, p), off in offsets.items()]
    try:
        result = c.commit(offsets=tps, asynchronous=False)
    except KafkaException as exc:
        events.offsets_committed(offsets, error=str(exc.args[0]))
        return
    errors = {(tp.topic, tp.partition): str(tp.error) for tp in result or () if tp.error}
    events.offsets_committed(offsets, partition_errors=errors)


def producer(args, events: Events, stop: StopFlag) -> None:
    conf = {"bootstrap.servers": args.bootstrap, "acks": str(args.acks), "retries": 0,
            "linger.ms": 5}
    conf.update(args.properties)
    p = Producer(conf)
    prefix = f"{args.value_prefix}." if args.value_prefix is not None else ""
    events.emit("startup_complete")

    def delivered(err, msg, value):
        key = msg.key().decode() if msg.key() else None
        if err:
            events.emit("producer_send_error", key=key, value=value, topic=msg.topic(),
                        exception=type(err).__name__, message=str(err))
        else:
            events.emit("producer_send_success", key=key, value=value, topic=msg.topic(),
                        partition=msg.partition(), offset=msg.offset())

    i = 0
    interval = 1.0 / args.throughput if args.throughput > 0 else 0.0
    start = time.monotonic()
    while not stop and (args.max_messages < 0 or i < args.max_messages):
        value = f"{prefix}{i}"
        try:
            p.produce(args.topic, value=value.encode(),
                      on_delivery=lambda err, msg, v=value: delivered(err, msg, v))
        except BufferError:
            p.poll(0.05)
            continue
        except KafkaException as exc:
            events.emit("producer_send_error", key=None, value=value, topic=args.topic,
                        exception=type(exc).__name__, message=str(exc))
        i += 1
        p.poll(0)
        if interval:
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                p.poll(delay)
    p.flush(30)
    events.emit("shutdown_complete")


def main(argv: list[str] | None = None) -> int:
    mode, args = contract.parse(argv, "confluent-kafka verifiable client",
                                group_protocols=("classic", "consumer"))
    stop = StopFlag().install()
    events = Events()
    (consumer if mode == "consumer" else producer)(args, events, stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
