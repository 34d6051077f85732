"""confluent-kafka (librdkafka) consumers over a log holding transactions: hand-built
transactional batches (tests/log/txn_frames.py) and COMMIT/ABORT markers written with the log's
marker API (what the transaction coordinator's markers do), then read with isolation.level
read_committed and read_uncommitted. librdkafka filters aborted records itself from Fetch's
aborted-transactions list, so this checks that list, the last stable offset and ListOffsets
by isolation level as a real client uses them."""

from __future__ import annotations

import sys
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from .helpers import unique, wait_until

sys.path.insert(0, str(Path(__file__).parents[1] / "log"))
from txn_frames import raw_batch  # noqa: E402


def consumer(emu, isolation: str) -> Consumer:
    return Consumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": unique("g"),
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "fetch.wait.max.ms": 100})


def on_emulator(emu, fn):
    """Run ``fn(broker)`` in the emulator's own thread (the log is not thread-safe)."""
    def run():
        result = fn(emu.broker)
        emu.broker.topics.notify_append()  # wake long-polling fetches, as Produce does
        return result
    return emu._run(run)


def append(topic, values, **producer):
    return lambda b: b.topics.partition(topic, 0).append(raw_batch(values, **producer),
                                                         b.now_ms()).base_offset


def marker(topic, pid, commit, epoch=1):
    return lambda b: b.topics.partition(topic, 0).append_marker(
        producer_id=pid, producer_epoch=epoch, coordinator_epoch=0, commit=commit,
        now_ms=b.now_ms())


def read(c: Consumer, want: int, timeout: float = 20.0) -> list[bytes]:
    got: list[bytes] = []

    def tick():
        for m in c.consume(num_messages=100, timeout=0.05):
            assert m.error() is None, m.error()
            got.append(m.value())
    wait_until(lambda: len(got) >= want, tick=tick, timeout=timeout,
               message=f"{want} records (have {got})")
    return got


def quiet(c: Consumer, seconds: float = 1.0) -> list[bytes]:
    return [m.value() for m in c.consume(num_messages=100, timeout=seconds) if m.error() is None]


def test_read_committed_hides_aborted_and_waits_for_open_transactions(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1})
    txn = {"transactional": True, "seq": 0, "epoch": 0}
    on_emulator(emu, append(topic, [b"c0", b"c1"], pid=1, **txn))     # 0-1
    on_emulator(emu, marker(topic, 1, commit=True))                    # 2
    on_emulator(emu, append(topic, [b"p0"]))                           # 3
    on_emulator(emu, append(topic, [b"a0", b"a1"], pid=2, **txn))     # 4-5
    on_emulator(emu, append(topic, [b"c2"], pid=3, **txn))            # 6
    on_emulator(emu, marker(topic, 2, commit=False))                   # 7
    on_emulator(emu, marker(topic, 3, commit=True))                    # 8
    on_emulator(emu, append(topic, [b"o0"], pid=4, **txn))            # 9: stays open
    on_emulator(emu, append(topic, [b"p1"]))                           # 10

    committed = consumer(emu, "read_committed")
    uncommitted = consumer(emu, "read_uncommitted")
    for c in (committed, uncommitted):
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

    assert read(uncommitted, 8) == [b"c0", b"c1", b"p0", b"a0", b"a1", b"c2", b"o0", b"p1"]
    assert read(committed, 4) == [b"c0", b"c1", b"p0", b"c2"]
    assert quiet(committed) == []  # the LSO (9) holds back the open transaction and p1
    # librdkafka's ListOffsets carries the consumer's isolation level: latest is the LSO for
    # read_committed, the high watermark otherwise
    tp = TopicPartition(topic, 0)
    assert committed.get_watermark_offsets(tp, timeout=10, cached=False) == (0, 9)
    assert uncommitted.get_watermark_offsets(tp, timeout=10, cached=False) == (0, 11)

    on_emulator(emu, marker(topic, 4, commit=True))                    # 11
    assert read(committed, 2) == [b"o0", b"p1"]
    committed.close()
    uncommitted.close()


def test_read_uncommitted_sees_aborted_records(kafka_emu_factory):
    topic = unique("t")
    emu = kafka_emu_factory(topics={topic: 1})
    txn = {"transactional": True, "seq": 0, "epoch": 0}
    on_emulator(emu, append(topic, [b"a0", b"a1"], pid=2, **txn))
    on_emulator(emu, marker(topic, 2, commit=False))
    on_emulator(emu, append(topic, [b"o0"], pid=4, **txn))
    on_emulator(emu, append(topic, [b"p1"]))
    c = consumer(emu, "read_uncommitted")
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    assert read(c, 4) == [b"a0", b"a1", b"o0", b"p1"]
    assert quiet(c, 0.5) == []  # markers are never delivered as records
    c.close()
