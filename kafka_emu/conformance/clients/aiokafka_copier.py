"""A transactional message copier on aiokafka, Kafka's contract (as ``confluent_copier.py``).

    python -m kafka_emu.conformance.clients.aiokafka_copier --bootstrap-server HOST:PORT \
        --input-topic IN --input-partition 0 --output-topic OUT --transactional-id copier-0 \
        --group-id G [--max-messages N] [--transaction-size 200] [--transaction-timeout 60000] \
        [--enable-random-aborts] [--use-group-metadata]

The same loop and events as Kafka's ``TransactionalMessageCopier`` (see confluent_copier.py):
a read_committed ``AIOKafkaConsumer`` assigned the input partition from the group's committed
offset, an ``AIOKafkaProducer`` with the transactional id; each ``getmany`` batch is copied in
one transaction with the consumer's positions (``send_offsets_to_transaction``), then
committed, or (``--enable-random-aborts``) one in three aborted and the consumer rewound.
aiokafka's ``send_offsets_to_transaction`` takes a group id only (no group metadata), so
``--use-group-metadata`` is accepted and changes nothing; ``--group-mode`` is refused (exit 2).
SIGTERM ends the loop at the next poll; a fenced producer or another error exits 1.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from .copier_flags import parse

POLL_MS = 200


class Copier:
    def __init__(self, args) -> None:
        self.args = args
        self.txn_id = args.transactional_id
        self.total = self.consumed = 0
        self.remaining = sys.maxsize if args.max_messages == -1 else args.max_messages
        self.stopping = False
        self.tp = TopicPartition(args.input_topic, args.input_partition)

    def _emit(self, head: dict) -> None:
        body = {**head, "totalProcessed": self.total, "consumed": self.consumed,
                "remaining": self.remaining,
                "time": time.strftime("%Y/%m/%d %H:%M:%S:000", time.gmtime())}
        print(json.dumps(body), flush=True)

    async def rewind(self, consumer: AIOKafkaConsumer) -> None:
        committed = await consumer.committed(self.tp)
        if committed is None:
            await consumer.seek_to_beginning(self.tp)
        else:
            consumer.seek(self.tp, committed)

    async def run(self) -> None:
        a = self.args
        consumer = AIOKafkaConsumer(bootstrap_servers=a.bootstrap, group_id=a.group_id,
                                    isolation_level="read_committed", enable_auto_commit=False,
                                    auto_offset_reset="earliest", session_timeout_ms=10000,
                                    max_poll_interval_ms=180000)
        producer = AIOKafkaProducer(bootstrap_servers=a.bootstrap, transactional_id=self.txn_id,
                                    transaction_timeout_ms=a.transaction_timeout,
                                    max_batch_size=512)
        await consumer.start()
        try:
            consumer.assign([self.tp])
            await self.rewind(consumer)
            end = (await consumer.end_offsets([self.tp]))[self.tp]
            self.remaining = min(self.remaining, max(0, end - await consumer.position(self.tp)))
            await producer.start()
            try:
                await self.loop(consumer, producer)
            finally:
                await producer.stop()
        finally:
            await consumer.stop()
            self._emit({"shutdown_complete": self.txn_id})

    async def loop(self, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer) -> None:
        a = self.args
        while self.remaining > 0:
            self._emit({"progress": self.txn_id, "stage": "ProcessLoop"})
            if self.stopping:
                break
            batch = await consumer.getmany(self.tp, timeout_ms=POLL_MS,
                                           max_records=a.transaction_size)
            records = batch.get(self.tp, [])
            if not records:
                continue
            await producer.begin_transaction()
            for m in records:
                await producer.send(a.output_topic, value=m.value, key=m.key,
                                    partition=m.partition)
            position = await consumer.position(self.tp)
            await producer.send_offsets_to_transaction(
                {self.tp: OffsetAndMetadata(position, "")}, a.group_id)
            if a.enable_random_aborts and random.randrange(3) == 0:
                await producer.abort_transaction()
                await self.rewind(consumer)
                continue
            await producer.commit_transaction()
            n = len(records)
            self.remaining -= n
            self.consumed += n
            self.total += n


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.group_mode:
        print("aiokafka_copier: --group-mode is not supported", file=sys.stderr)
        return 2
    copier = Copier(args)

    async def run() -> None:
        asyncio.get_running_loop().add_signal_handler(
            signal.SIGTERM, lambda: setattr(copier, "stopping", True))
        await copier.run()
    try:
        asyncio.run(run())
    except Exception as exc:  # fenced, or any other error: the copier fails (exit 1)
        print(f"copier {copier.txn_id}: {exc!r}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
