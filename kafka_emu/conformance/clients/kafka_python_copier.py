"""A transactional message copier on kafka-python (3.x), Kafka's contract (as confluent_copier.py).

    python -m kafka_emu.conformance.clients.kafka_python_copier --bootstrap-server HOST:PORT \
        --input-topic IN --input-partition 0 --output-topic OUT --transactional-id copier-0 \
        --group-id G [--max-messages N] [--transaction-size 200] [--transaction-timeout 60000] \
        [--enable-random-aborts] [--use-group-metadata]

The same loop and events as Kafka's ``TransactionalMessageCopier`` (see confluent_copier.py): a
read_committed ``KafkaConsumer`` assigned the input partition from the group's committed offset,
a ``KafkaProducer`` with the transactional id (kafka-python's transactional producer exists since
2.1); each ``poll`` batch is copied to the same output partition in one transaction with the
consumer's position (``send_offsets_to_transaction``), then committed, or (with
``--enable-random-aborts``) one in three aborted and the consumer rewound to the committed
offset. ``--use-group-metadata`` passes ``consumer.group_metadata()`` (in assign mode generation
-1 and no member id, what Kafka's group-id-only form sends); without it the group id. kafka-python
3's subscribe mode is not wired here: ``--group-mode`` is refused (exit 2). SIGTERM ends the loop
at the next poll; a fenced producer or another error exits 1.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from .copier_flags import parse

POLL_MS = 200
TIMEOUT_MS = 60000


class Copier:
    def __init__(self, args) -> None:
        self.args = args
        self.txn_id = args.transactional_id
        self.total = self.consumed = 0
        self.remaining = sys.maxsize if args.max_messages == -1 else args.max_messages
        self.stopping = False
        self.tp = TopicPartition(args.input_topic, args.input_partition)
        self.consumer: KafkaConsumer | None = None
        self.producer: KafkaProducer | None = None

    def _emit(self, head: dict) -> None:
        body = {**head, "totalProcessed": self.total, "consumed": self.consumed,
                "remaining": self.remaining,
                "time": time.strftime("%Y/%m/%d %H:%M:%S:000", time.gmtime())}
        print(json.dumps(body), flush=True)

    def rewind(self) -> None:
        """Back to the committed offset (the beginning without one), as Kafka's
        resetToLastCommittedPositions after an abort."""
        committed = self.consumer.committed(self.tp, timeout_ms=TIMEOUT_MS)
        if committed is None:
            self.consumer.seek_to_beginning(self.tp)
        else:
            self.consumer.seek(self.tp, committed)

    def setup(self) -> None:
        a = self.args
        self.consumer = KafkaConsumer(
            bootstrap_servers=a.bootstrap, group_id=a.group_id,
            isolation_level="read_committed", enable_auto_commit=False,
            auto_offset_reset="earliest", session_timeout_ms=10000,
            max_poll_interval_ms=180000, request_timeout_ms=30000)
        self.consumer.assign([self.tp])
        self.rewind()
        end = self.consumer.end_offsets([self.tp])[self.tp]
        self.remaining = min(self.remaining, max(0, end - self.consumer.position(self.tp)))
        self.producer = KafkaProducer(
            bootstrap_servers=a.bootstrap, transactional_id=self.txn_id,
            transaction_timeout_ms=a.transaction_timeout, batch_size=512, linger_ms=5,
            request_timeout_ms=30000)
        self.producer.init_transactions()

    def copy_one(self, records: list) -> None:
        a, p = self.args, self.producer
        p.begin_transaction()
        for m in records:
            p.send(a.output_topic, value=m.value, key=m.key, partition=m.partition)
        position = self.consumer.position(self.tp)
        group = self.consumer.group_metadata() if a.use_group_metadata else a.group_id
        p.send_offsets_to_transaction({self.tp: OffsetAndMetadata(position, "", -1)}, group)
        if a.enable_random_aborts and random.randrange(3) == 0:
            p.abort_transaction()
            self.rewind()
            return
        p.commit_transaction()
        n = len(records)
        self.remaining -= n
        self.consumed += n
        self.total += n

    def run(self) -> None:
        self.setup()
        while self.remaining > 0:
            self._emit({"progress": self.txn_id, "stage": "ProcessLoop"})
            if self.stopping:
                break
            batch = self.consumer.poll(timeout_ms=POLL_MS, max_records=self.args.transaction_size)
            records = batch.get(self.tp, [])
            if records:
                self.copy_one(records)

    def close(self) -> None:
        try:
            if self.producer is not None:
                self.producer.close(timeout=5)
        finally:
            if self.consumer is not None:
                self.consumer.close(autocommit=False)
            self._emit({"shutdown_complete": self.txn_id})


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.group_mode:
        print("kafka_python_copier: --group-mode is not supported", file=sys.stderr)
        return 2
    copier = Copier(args)
    signal.signal(signal.SIGTERM, lambda signum, frame: setattr(copier, "stopping", True))
    code = 0
    try:
        copier.run()
    except KafkaError as exc:  # fenced, or any other client error: the copier fails (exit 1)
        print(f"copier {copier.txn_id}: {exc!r}", file=sys.stderr, flush=True)
        code = 1
    copier.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
