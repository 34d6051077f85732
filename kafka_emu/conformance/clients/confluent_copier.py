"""A transactional message copier on confluent-kafka (librdkafka), Kafka's contract.

    python -m kafka_emu.conformance.clients.confluent_copier --bootstrap-server HOST:PORT \
        --input-topic IN --input-partition 0 --output-topic OUT --transactional-id copier-0 \
        --group-id G [--max-messages N] [--transaction-size 200] [--transaction-timeout 60000] \
        [--enable-random-aborts] [--use-group-metadata] [--group-mode]

It does what Kafka's ``org.apache.kafka.tools.TransactionalMessageCopier`` does (the program
``tests/kafkatest/tests/core/transactions_test.py`` bounces): a read_committed consumer assigned
one input partition (or subscribed, ``--group-mode``) from its group's committed offset, and a
transactional producer; each poll's records are copied to the same partition number of the
output topic in one transaction together with the consumer's positions
(``send_offsets_to_transaction``), then committed -- or, with ``--enable-random-aborts``, one
transaction in three aborted and the consumer rewound to the committed offsets. The work is the
input partition's end offset at launch minus the committed position (capped by
``--max-messages``).

Events (stdout, one JSON object a line, Kafka's keys): before each poll
``{"progress": TXN_ID, "totalProcessed", "consumed", "remaining", "time", "stage":
"ProcessLoop"}`` (``"RebalanceComplete"`` after an assignment in group mode), and on the way
out ``{"shutdown_complete": TXN_ID, "totalProcessed", "consumed", "remaining", "time"}``;
``remaining`` 0 there means the copy is done. SIGTERM stops the loop at the next poll; the
producer's open transaction is left to the coordinator (fenced by the next life's
InitProducerId, as Java's ``close`` leaves it). A fenced producer or a fatal error exits 1.

``--use-group-metadata``: librdkafka has only the group-metadata form of
``sendOffsetsToTransaction``; without the flag the same call is made, and in assign mode the
metadata carries generation -1 and no member id, which is what Kafka's group-id-only form sends.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from .copier_flags import parse

POLL_S = 0.2  # Kafka's copier polls for 200 ms


class Copier:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.txn_id = args.transactional_id
        self.total = 0
        self.consumed = 0  # since the last rebalance (Kafka's numMessagesProcessedSinceLast...)
        self.remaining = sys.maxsize if args.max_messages == -1 else args.max_messages
        self.stopping = False
        self.producer = Producer({
            "bootstrap.servers": args.bootstrap, "transactional.id": self.txn_id,
            "transaction.timeout.ms": args.transaction_timeout,
            # Kafka's copier: small batches, several in flight per transaction
            "batch.size": 512, "max.in.flight.requests.per.connection": 5, "linger.ms": 5})
        self.consumer = Consumer({
            "bootstrap.servers": args.bootstrap, "group.id": args.group_id,
            "isolation.level": "read_committed", "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
            "max.poll.interval.ms": 180000, "heartbeat.interval.ms": 3000,
            "enable.partition.eof": False})

    # -- events -------------------------------------------------------------------------------
    def _emit(self, head: dict) -> None:
        body = {**head, "totalProcessed": self.total, "consumed": self.consumed,
                "remaining": self.remaining,
                "time": time.strftime("%Y/%m/%d %H:%M:%S:000", time.gmtime())}
        print(json.dumps(body), flush=True)

    def status(self, stage: str) -> None:
        self._emit({"progress": self.txn_id, "stage": stage})

    # -- positions ----------------------------------------------------------------------------
    def _remaining_of(self, tp: TopicPartition) -> int:
        committed = self.consumer.committed([tp], timeout=60)[0].offset
        low, high = self.consumer.get_watermark_offsets(tp, timeout=60, cached=False)
        start = committed if committed >= 0 else low
        return max(0, high - start)

    def rewind(self) -> None:
        """Seek every assigned partition to its committed offset (the beginning without one),
        as Kafka's resetToLastCommittedPositions after an abort."""
        assigned = self.consumer.assignment()
        for tp in self.consumer.committed(assigned, timeout=60):
            if tp.offset < 0:
                low, _ = self.consumer.get_watermark_offsets(tp, timeout=60, cached=False)
                tp.offset = low
            self.consumer.seek(tp)

    def setup(self) -> None:
        a = self.args
        if a.group_mode:
            def on_assign(consumer, partitions):
                self.remaining = sum(self._remaining_of(tp) for tp in partitions)
                self.consumed = 0
                self.status("RebalanceComplete")
            self.consumer.subscribe([a.input_topic], on_assign=on_assign)
        else:
            tp = TopicPartition(a.input_topic, a.input_partition)
            # the committed offset, else auto.offset.reset (earliest)
            self.consumer.assign([tp])
            self.remaining = min(self._remaining_of(tp), self.remaining)
        self.producer.init_transactions(60)

    # -- the loop -----------------------------------------------------------------------------
    def copy_one(self, records: list) -> None:
        p = self.producer
        p.begin_transaction()
        for m in records:
            p.produce(self.args.output_topic, value=m.value(), key=m.key(), partition=m.partition())
        positions = self.consumer.position(self.consumer.assignment())
        p.send_offsets_to_transaction(positions, self.consumer.consumer_group_metadata(), 60)
        if self.args.enable_random_aborts and random.randrange(3) == 0:
            raise _RandomAbort()
        while True:
            try:
                p.commit_transaction(60)
                break
            except KafkaException as exc:
                if exc.args[0].retriable():
                    continue
                raise
        n = len(records)
        self.remaining -= n
        self.consumed += n
        self.total += n

    def run(self) -> int:
        self.setup()
        while self.remaining > 0:
            self.status("ProcessLoop")
            if self.stopping:
                break
            records = [m for m in self.consumer.consume(self.args.transaction_size, POLL_S)
                       if m.error() is None]
            if not records:
                continue
            try:
                self.copy_one(records)
            except (_RandomAbort, KafkaException) as exc:
                if isinstance(exc, KafkaException):
                    err = exc.args[0]
                    # fenced or fatal: nothing to recover (Kafka's copier rethrows these)
                    if err.fatal() or not err.txn_requires_abort():
                        raise
                self.producer.abort_transaction(60)
                self.rewind()
        return 0

    def close(self) -> None:
        try:
            self.producer.flush(5)
        finally:
            self.consumer.close()
            self._emit({"shutdown_complete": self.txn_id})


class _RandomAbort(Exception):
    """--enable-random-aborts chose to abort this transaction."""


def main(argv: list[str] | None = None) -> int:
    copier = Copier(parse(argv))

    def on_term(signum, frame) -> None:
        copier.stopping = True
    signal.signal(signal.SIGTERM, on_term)
    try:
        code = copier.run()
    except KafkaException as exc:
        print(f"copier {copier.txn_id}: {exc}", file=sys.stderr, flush=True)
        code = 1
    copier.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
