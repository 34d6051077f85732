"""A stand-in for librdkafka's ``kafkatest_verifiable_client``, for the kit's live tests.

It behaves as that program is documented to (``examples/kafkatest_verifiable_client.cpp`` in
librdkafka: its command line and what it prints), on confluent-kafka, which is librdkafka:

- flags: ``--broker-list`` (no ``--bootstrap-server``), ``-X key=value``, ``--consumer.config`` /
  ``--producer.config`` read as ``key=value`` lines, ``--acks VALUE``; a value that starts with
  '-' is taken as missing (so ``--acks -1`` fails), an unknown flag exits 1; it prints every
  argument on stdout and its librdkafka version on stderr;
- consumer: no ``startup_complete``; ``records_consumed`` without timestamps, with ``_totcount``,
  one total ``count`` and, for every partition it ever read, ``minOffset`` (-1 when nothing is
  new) and ``maxOffset`` (the highest offset ever read); reported every 1000 records or when a
  consume times out, and before commits and rebalances; commits on a consume timeout; an eager
  rebalance callback; "Created assignment" on stdout the first time it reads a partition;
- producer: ``producer_send_success`` / ``producer_send_error`` with ``_time``, no timestamp.

Not librdkafka's program (build that from librdkafka's sources for the real thing).
"""

from __future__ import annotations

import json
import signal
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

VALUED = {"--topic", "--broker-list", "--max-messages", "--throughput", "--producer.config",
          "--consumer.config", "--group-id", "--session-timeout", "--reset-policy",
          "--assignment-strategy", "--value-prefix", "--acks", "--debug", "-X"}
run = True


def now() -> str:
    t = time.time()
    return time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def parse(argv: list[str]) -> tuple[str, dict, dict]:
    mode, opts, conf = "P", {"max": -1}, {"acks": "all", "enable.auto.commit": "false"}
    i = 0
    while i < len(argv):
        name = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("-") else None
        out(f"{now()}: argument: {name} {val or ''}")
        if val is not None:
            if name not in VALUED:
                sys.exit(f"{now()}: Unknown option {name}")
            if name in ("--consumer.config", "--producer.config"):
                for line in open(val, encoding="utf-8").read().splitlines():
                    if line and line[0] != "#" and "=" in line[1:]:
                        key, _, value = line.partition("=")
                        conf[key] = value
            elif name == "-X":
                key, _, value = val.partition("=")
                conf[key] = value
            else:
                opts[name] = val
            i += 2
            continue
        if name in ("--consumer", "--producer"):
            mode = name[2].upper()
        elif name == "--enable-autocommit":
            opts["autocommit"] = True
            conf["enable.auto.commit"] = "true"
        else:
            sys.exit(f"{now()}: Unknown option or missing argument to {name}")
        i += 1
    if "--topic" not in opts or "--broker-list" not in opts:
        sys.exit(f"{now()}: Missing --topic and --broker-list")
    conf["bootstrap.servers"] = opts["--broker-list"]
    for flag, key in (("--group-id", "group.id"), ("--session-timeout", "session.timeout.ms"),
                      ("--acks", "acks")):
        if flag in opts:
            conf[key] = opts[flag]
    opts["max"] = int(opts.get("--max-messages", -1))
    return mode, opts, conf


class Consuming:
    def __init__(self, consumer: Consumer, opts: dict) -> None:
        self.c = consumer
        self.opts = opts
        self.parts: dict[tuple[str, int], list[int]] = {}  # tp -> [minOffset, maxOffset]
        self.consumed = self.reported = self.at_commit = 0

    def report(self, immediate: bool) -> None:
        if self.consumed <= self.reported + (0 if immediate else 999):
            return
        parts = []
        for (topic, partition), a in sorted(self.parts.items()):
            parts.append({"topic": topic, "partition": partition, "minOffset": a[0],
                          "maxOffset": a[1]})
            a[0] = -1
        out(json.dumps({"name": "records_consumed", "_totcount": self.consumed,
                        "count": self.consumed - self.reported, "partitions": parts}))
        self.reported = self.consumed

    def commit(self, immediate: bool) -> None:
        if not immediate and (self.opts.get("autocommit") or self.at_commit + 1000 >
                              self.consumed):
            return
        self.report(True)
        try:
            offsets = self.c.commit(asynchronous=False)
            error = ""
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError._NO_OFFSET:
                return
            offsets, error = [], exc.args[0].str()
        out(json.dumps({"name": "offsets_committed", "success": not error, "error": error,
                        "_autocommit": bool(self.opts.get("autocommit")), "offsets": [
                            {"topic": tp.topic, "partition": tp.partition, "offset": tp.offset,
                             "error": tp.error.str() if tp.error else ""} for tp in offsets]}))
        self.at_commit = self.consumed

    def on_assign(self, _c, partitions) -> None:
        self.report(True)
        out(json.dumps({"name": "partitions_assigned", "partitions": [
            {"topic": tp.topic, "partition": tp.partition} for tp in partitions]}))

    def on_revoke(self, _c, partitions) -> None:
        self.report(True)
        self.commit(True)
        out(json.dumps({"name": "partitions_revoked", "partitions": [
            {"topic": tp.topic, "partition": tp.partition} for tp in partitions]}))

    def message(self, msg) -> None:
        if self.opts["max"] >= 0 and self.consumed >= self.opts["max"]:
            return
        tp = (msg.topic(), msg.partition())
        if tp not in self.parts:
            out("Created assignment")
            self.parts[tp] = [-1, 0]
        a = self.parts[tp]
        if a[0] == -1:
            a[0] = msg.offset()
        a[1] = max(a[1], msg.offset())
        self.consumed += 1
        self.report(False)
        self.commit(False)


def consume(opts: dict, conf: dict) -> None:
    conf = {**conf, "auto.offset.reset": "smallest", "enable.partition.eof": "true"}
    conf.pop("acks", None)
    c = Consumer(conf)
    state = Consuming(c, opts)
    c.subscribe([opts["--topic"]], on_assign=state.on_assign, on_revoke=state.on_revoke)
    while run:
        msg = c.poll(0.5)
        if msg is None:
            state.report(True)
            state.commit(True)
        elif not msg.error():
            state.message(msg)
        elif msg.error().code() != KafkaError._PARTITION_EOF:
            print(f"{now()}: Consume failed: {msg.error()}", file=sys.stderr)
    state.commit(True)
    c.close()


def produce(opts: dict, conf: dict) -> None:
    p = Producer({**conf, "message.timeout.ms": 60000})
    topic = opts["--topic"]

    def delivered(err, msg) -> None:
        value = msg.value().decode()
        if err:
            out(json.dumps({"name": "producer_send_error", "_time": now(), "message": err.str(),
                            "topic": msg.topic(), "key": "NULL", "value": value}))
        else:
            out(json.dumps({"name": "producer_send_success", "_time": now(),
                            "topic": msg.topic(), "partition": msg.partition(),
                            "offset": msg.offset(), "key": "NULL", "value": value}))
    for i in range(opts["max"] if opts["max"] >= 0 else 1000000):
        if not run:
            break
        p.produce(topic, str(i).encode(), on_delivery=delivered)
        p.poll(0)
    p.flush(30)


def main() -> int:
    global run

    def stop(*_args) -> None:
        global run
        run = False
    print(f"{now()}: librdkafka version {confluent_kafka.libversion()[0]} "
          f"({confluent_kafka.libversion()[1]:#x})", file=sys.stderr, flush=True)
    mode, opts, conf = parse(sys.argv[1:])
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    consume(opts, conf) if mode == "C" else produce(opts, conf)
    out('{ "name": "shutdown_complete" }')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
