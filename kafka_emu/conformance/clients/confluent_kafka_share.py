"""Verifiable share consumer on confluent-kafka's ``ShareConsumer`` (librdkafka 2.16, KIP-932).

    python -m kafka_emu.conformance.clients.confluent_kafka_share --topic T --group-id G \
        --bootstrap-server HOST:PORT [--acknowledgement-mode auto|sync|async]
        [--offset-reset-strategy earliest|latest] [--max-messages N] [--consumer.config FILE]

Kafka's ``VerifiableShareConsumer`` (tools/.../VerifiableShareConsumer.java), the program its
``share_consumer_test.py`` drives, re-expressed: every mode acknowledges implicitly (a poll's
records are accepted by the next poll or commit); ``sync`` calls ``commit_sync`` after each
non-empty poll, ``async`` ``commit_async``, ``auto`` leaves it to the next poll. With
``--offset-reset-strategy`` the group's ``share.auto.offset.reset`` is set first through the
admin client (IncrementalAlterConfigs on the GROUP resource), as Kafka's tool does.

Events (one JSON line each, as the Java tool prints them): ``startup_complete``,
``offset_reset_strategy_set`` (offsetResetStrategy), ``records_consumed`` (count, partitions:
[{topic, partition, count, offsets}]), ``offsets_acknowledged`` (count, partitions: [{topic,
partition, count, offsets}], success, error) from the acknowledgement commit callback,
``shutdown_complete``. SIGTERM closes the consumer (which commits what is pending) first.
"""

from __future__ import annotations

import argparse

from confluent_kafka import KafkaException, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kafka_emu.conformance.contract import Events, StopFlag, log, read_properties

POLL_S = 0.2
MODES = ("auto", "sync", "async")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="verifiable-share-consumer")
    boot = parser.add_mutually_exclusive_group(required=True)
    boot.add_argument("--bootstrap-server", dest="bootstrap")
    boot.add_argument("--broker-list", dest="bootstrap")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group-id", required=True)
    parser.add_argument("--max-messages", type=int, default=-1)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--acknowledgement-mode", default="auto", choices=MODES)
    parser.add_argument("--offset-reset-strategy", default="")
    parser.add_argument("--consumer.config", dest="config")
    args = parser.parse_args(argv)
    args.properties = read_properties(args.config)
    return args


def _set_reset_strategy(args, events: Events) -> None:
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    resource = ConfigResource(ResourceType.GROUP, args.group_id, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", args.offset_reset_strategy,
                    incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=60)
    events.emit("offset_reset_strategy_set", offsetResetStrategy=args.offset_reset_strategy)


def _parts(by_tp: dict[tuple[str, int], set[int] | list[int]]) -> list[dict]:
    return [{"topic": t, "partition": p, "count": len(offs), "offsets": sorted(offs)}
            for (t, p), offs in sorted(by_tp.items()) if offs]


def run(args, events: Events, stop: StopFlag) -> None:
    events.emit("startup_complete")
    conf = {"bootstrap.servers": args.bootstrap, "group.id": args.group_id,
            **args.properties, "share.acknowledgement.mode": "implicit"}
    acknowledged = 0
    consumer = None
    try:
        if args.offset_reset_strategy:
            _set_reset_strategy(args, events)
        consumer = ShareConsumer(conf)

        def on_complete(offsets, exception) -> None:
            nonlocal acknowledged
            by_tp = {(tp.topic, tp.partition): offs for tp, offs in offsets.items()}
            count = sum(len(o) for o in by_tp.values())
            fields = {"count": count, "partitions": _parts(by_tp), "success": exception is None}
            if exception is not None:
                fields["error"] = str(exception)
            else:
                acknowledged += count
            events.emit("offsets_acknowledged", **fields)

        consumer.set_acknowledgement_commit_callback(on_complete)
        consumer.subscribe([args.topic])
        while not stop and not (args.max_messages >= 0 and acknowledged >= args.max_messages):
            batch: dict[tuple[str, int], list[int]] = {}
            for m in consumer.poll(POLL_S):
                if m.error():
                    log(f"share consumer error: {m.error()}")
                    continue
                batch.setdefault((m.topic(), m.partition()), []).append(m.offset())
                if args.verbose:
                    events.emit("record_data", topic=m.topic(), partition=m.partition(),
                                offset=m.offset(), key=None, value=None)
            if not batch:
                continue
            events.emit("records_consumed", count=sum(len(o) for o in batch.values()),
                        partitions=_parts(batch))
            if args.acknowledgement_mode == "sync":
                consumer.commit_sync()
            elif args.acknowledgement_mode == "async":
                consumer.commit_async()
    except KafkaException as exc:  # Kafka's tool logs and ends, printing shutdown_complete
        log(f"error during processing, terminating: {exc}")
    finally:
        if consumer is not None:
            consumer.close()
        events.emit("shutdown_complete")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    stop = StopFlag().install()
    run(args, Events(), stop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
