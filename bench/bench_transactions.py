"""Small transactions per second (issue 35): one record to one partition plus one offset commit
in a transaction, against the same work without a transaction, in one run.

Not a test: it prints the rates measured and their ratio, and always exits 0.

* transactional: a confluent-kafka producer with a transactional.id runs N transactions, each
  begin_transaction, produce one record, send_offsets_to_transaction (AddOffsetsToTxn +
  TxnOffsetCommit for one partition of a group), commit_transaction (EndTxn, markers) --
  the same request sequence librdkafka sends in a consume-transform-produce loop;
* plain: an idempotent producer producing one record and flushing, then a consumer committing
  one offset synchronously, N times.

kafka-emu runs in a thread of this process (the pytest fixture's mode); wall time, median of
rounds. A third figure is the transaction coordinator alone (kafka_emu/transactions/, pure): one
AddPartitionsToTxn, one AddOffsetsToTxn, EndTxn and the markers' completion per transaction,
without sockets or logs -- the coordinator's own share of the cost.

    python bench/bench_transactions.py [--count N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from kafka_emu.testing import make_config, run_in_thread

TIMEOUT = 30.0


def transactional(emu, topic: str, group: str, count: int) -> float:
    p = Producer({"bootstrap.servers": emu.bootstrap_servers,
                  "transactional.id": f"bench-{uuid.uuid4().hex[:8]}", "linger.ms": 0})
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group})
    p.init_transactions(TIMEOUT)
    meta = c.consumer_group_metadata()
    start = time.perf_counter()
    for i in range(count):
        p.begin_transaction()
        p.produce(topic, value=b"x", partition=0)
        p.send_offsets_to_transaction([TopicPartition(topic, 0, i + 1)], meta, TIMEOUT)
        p.commit_transaction(TIMEOUT)
    elapsed = time.perf_counter() - start
    c.close()
    return count / elapsed


def plain(emu, topic: str, group: str, count: int) -> float:
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "enable.idempotence": True,
                  "linger.ms": 0})
    c = Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                  "enable.auto.commit": False})
    p.produce(topic, value=b"warm", partition=0)
    p.flush(TIMEOUT)
    start = time.perf_counter()
    for i in range(count):
        p.produce(topic, value=b"x", partition=0)
        p.flush(TIMEOUT)
        c.commit(offsets=[TopicPartition(topic, 0, i + 1)], asynchronous=False)
    elapsed = time.perf_counter() - start
    c.close()
    return count / elapsed


def coordinator_alone(count: int) -> float:
    from kafka_emu.transactions import TransactionCoordinator
    c = TransactionCoordinator()
    pid = c.init_producer_id("bench", 60_000, None, 0).producer_id
    start = time.perf_counter()
    for i in range(count):
        c.add_partitions("bench", pid, 0, [("t", 0)], i)
        c.add_partitions("bench", pid, 0, (), i, group_id="g")
        c.end_txn("bench", pid, 0, True, i)
        c.markers_written("bench", i)
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"transactional": [], "plain": []}
    with run_in_thread(make_config(topics={"bench-txn": 1})) as emu:
        for r in range(args.rounds):
            rates["transactional"].append(transactional(emu, "bench-txn", f"gt{r}", args.count))
            rates["plain"].append(plain(emu, "bench-txn", f"gp{r}", args.count))
    alone = statistics.median(coordinator_alone(100 * args.count) for _ in range(args.rounds))
    txn, base = (statistics.median(rates[k]) for k in ("transactional", "plain"))
    print(f"{'work':<16}{'per second (median of ' + str(args.rounds) + ')':>28}")
    print(f"{'transactional':<16}{txn:>28.0f}")
    print(f"{'plain':<16}{base:>28.0f}")
    print(f"{'coordinator':<16}{alone:>28.0f}  (pure, no sockets)")
    print(f"transactional / plain: {txn / base:.2f}")


if __name__ == "__main__":
    main()
