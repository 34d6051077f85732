"""confluent-kafka's ShareConsumer (librdkafka 2.16) against kafka-emu's share groups: several
consumers share one partition and no record goes to two of them; implicit and explicit
acknowledgement; release -> redelivery with the delivery count; reject -> archived; a consumer
SIGKILLed while holding records, and one that stops polling, have their records redelivered
once the locks expire -- at once, by moving the emulator's clock; the delivery count limit
archives a poison record."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from kafka_emu.control.operations import ControlError
from kafka_emu.testing import make_config, run_in_thread

from .helpers import unique

SETTINGS = {"group.share.heartbeat.interval.ms": "100"}


@pytest.fixture
def emu():
    with run_in_thread(make_config(SETTINGS, topics={"t": 1})) as emulator:
        yield emulator


def consumer(emu, group, mode="implicit") -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": emu.bootstrap_servers, "group.id": group,
                       "share.acknowledgement.mode": mode})
    c.subscribe(["t"])
    return c


def produce(emu, n, start=0) -> None:
    """n records, each its own batch, so several consumers can share them."""
    p = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 0})
    for i in range(start, start + n):
        p.produce("t", value=b"v%d" % i)
        p.flush(10)


def view(emu, group):
    try:
        (part,) = emu.share_partitions(group)
    except ControlError:
        return None
    return part


def started(emu, group, consumers, timeout=30.0):
    """Poll until the share-partition exists (its start offset fixed: latest, the log end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            assert [m for m in c.poll(0.1) if m.error() is None] == []
        if view(emu, group) is not None:
            return
    raise AssertionError("no share fetch reached the emulator")


def poll_until(consumers, done, timeout=30.0, on_message=None):
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not done(got):
        for i, c in enumerate(consumers):
            for m in c.poll(0.2):
                assert m.error() is None, m.error()
                got.append((i, m.offset(), m.delivery_count()))
                if on_message is not None:
                    on_message(c, m)
    return got


def test_consumers_share_a_partition_and_no_record_goes_to_two(emu):
    group = unique("sg")
    cs = [consumer(emu, group) for _ in range(3)]
    try:
        started(emu, group, cs)
        produce(emu, 40)
        got = poll_until(cs, lambda g: len(g) >= 40)
        offsets = [o for _, o, _ in got]
        assert sorted(offsets) == list(range(40))  # each exactly once: no duplicate delivery
        assert all(count == 1 for _, _, count in got)
        for c in cs:
            c.commit_sync()  # implicit mode: the last poll's records are accepted now
        assert emu.wait_for(lambda: view(emu, group)["start_offset"] == 40, timeout=20)
    finally:
        for c in cs:
            c.close()


def test_explicit_release_redelivers_and_reject_archives(emu):
    group = unique("sg")
    c = consumer(emu, group, mode="explicit")
    try:
        started(emu, group, [c])
        produce(emu, 3)
        seen = []

        def act(c_, m):
            seen.append((m.offset(), m.delivery_count()))
            kind = {0: AcknowledgeType.ACCEPT, 1: AcknowledgeType.RELEASE,
                    2: AcknowledgeType.REJECT}[m.offset()]
            if m.offset() == 1 and m.delivery_count() > 1:
                kind = AcknowledgeType.ACCEPT  # the redelivery is taken
            c_.acknowledge(m, kind)

        poll_until([c], lambda g: (1, 2) in seen, on_message=act)
        c.commit_sync()
        assert sorted(seen) == [(0, 1), (1, 1), (1, 2), (2, 1)]  # 2 rejected: never again
        assert poll_until([c], lambda g: False, timeout=2) == []
        assert emu.wait_for(lambda: view(emu, group)["start_offset"] == 3, timeout=20)
    finally:
        c.close()


def test_a_killed_consumer_s_records_are_redelivered(emu):
    group = unique("sg")
    script = Path(__file__).with_name("share_child.py")
    child = subprocess.Popen([sys.executable, str(script), emu.bootstrap_servers, group, "t"],
                             stdout=subprocess.PIPE, text=True)
    b = None
    try:
        # the child's first fetch fixes the start offset (latest); then it gets the record
        assert emu.wait_for(lambda: view(emu, group), timeout=30)
        produce(emu, 1)
        assert child.stdout.readline().split() == ["0"]
        held = view(emu, group)["in_flight"][0]
        assert (held["state"], held["delivery_count"]) == ("ACQUIRED", 1)
        b = consumer(emu, group)
        assert poll_until([b], lambda g: False, timeout=1.5) == []  # the child holds it
        child.kill()  # SIGKILL: no close, no acknowledgement
        child.wait(10)
        emu.advance(30_000)  # group.share.record.lock.duration.ms passes at once
        got = poll_until([b], lambda g: bool(g))
        assert [(o, n) for _, o, n in got] == [(0, 2)]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if b is not None:
            b.close()


@pytest.mark.parametrize("expire_by", ["clock", "control"])
def test_a_stalled_consumer_s_locks_expire_on_the_clock(emu, expire_by):
    group = unique("sg")
    a = consumer(emu, group, mode="explicit")
    b = None
    try:
        started(emu, group, [a])
        produce(emu, 1)
        got_a = poll_until([a], lambda g: bool(g))
        assert [(o, n) for _, o, n in got_a] == [(0, 1)]
        # a stops polling and holds the record; b (joining now: librdkafka fetches in the
        # background, so a second consumer present earlier might have taken it first) finds
        # nothing until the lock runs out
        b = consumer(emu, group)
        assert poll_until([b], lambda g: False, timeout=1.5) == []
        if expire_by == "clock":
            emu.advance(30_000)
        else:
            assert emu.expire_share_locks(group) == {"released": 1, "archived": 0}
        got_b = poll_until([b], lambda g: bool(g))
        assert [(o, n) for _, o, n in got_b] == [(0, 2)]
    finally:
        a.close()
        if b is not None:
            b.close()


@pytest.mark.parametrize("limit", [2])
def test_the_delivery_limit_archives_a_poison_record(limit):
    settings = {**SETTINGS, "group.share.delivery.count.limit": str(limit)}
    with run_in_thread(make_config(settings, topics={"t": 1})) as emu:
        group = unique("sg")
        c = consumer(emu, group, mode="explicit")
        try:
            started(emu, group, [c])
            produce(emu, 2)
            seen = []

            def act(c_, m):
                seen.append((m.offset(), m.delivery_count()))
                # offset 0 is poison: the application gives it back every time
                c_.acknowledge(m, AcknowledgeType.RELEASE if m.offset() == 0
                               else AcknowledgeType.ACCEPT)

            poll_until([c], lambda g: (0, limit) in seen and (1, 1) in seen, on_message=act)
            c.commit_sync()
            assert poll_until([c], lambda g: False, timeout=2, on_message=act) == []
            assert sorted(seen) == [(0, n) for n in range(1, limit + 1)] + [(1, 1)]
            part = emu.wait_for(lambda: (lambda v: v if v["start_offset"] == 2 else None)(
                view(emu, group)), timeout=20)
            assert part["in_flight"] == []  # archived at the limit, then passed by the start
        finally:
            c.close()


def test_a_large_batch_kept_in_its_frame_is_shared_whole(emu):
    """A producer's batch of hundreds of KB, which the log keeps as a view of the request's own
    buffer (kafka_emu/owned_bytes.py): a ShareConsumer gets every record once, values intact."""
    from kafka_emu.owned_bytes import OwnedBytes

    group, count = unique("sg"), 3000
    c = consumer(emu, group)
    try:
        started(emu, group, [c])
        p = Producer({"bootstrap.servers": emu.bootstrap_servers, "linger.ms": 200,
                      "batch.size": 1_000_000})
        for i in range(count):
            p.produce("t", value=b"%d-" % i + b"x" * 200)
        assert p.flush(30) == 0
        log = emu.broker.topics.catalogue.get("t").partitions[0]
        assert any(type(b) is memoryview and b.obj.__class__ is OwnedBytes for b in log._batches)
        values = {}
        poll_until([c], lambda g: len(values) >= count,
                   on_message=lambda _, m: values.setdefault(m.offset(), m.value()))
        start = min(values)
        assert values == {start + i: b"%d-" % i + b"x" * 200 for i in range(count)}
    finally:
        c.close()
