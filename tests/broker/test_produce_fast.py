"""The Produce fast path (handlers/produce_fast.py, protocol/produce_scan.py) against the generic
path: the same frames, sent through ``handle_frame`` to two brokers set up alike -- one as the
server runs, one with the fast path turned off (every request decoded by the generated reader
and answered by the generic handler) -- must get the same response bytes and leave the same
logs. The requests are random: versions 3-13, known, unknown and internal topics, partitions in
and out of range, several batches, idempotent sequences in and out of order, damaged CRCs,
keyless records on a compacted topic, transactional batches without a transactional id, acks
0/1/-1/2, null records. The same holds between frames the log copies batches from (``bytes``, a
plain ``bytearray``) and frames it keeps batches of as views (``OwnedBytes``, a large frame's
own buffer: kafka_emu/owned_bytes.py)."""

from __future__ import annotations

import itertools
import uuid

import trio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.broker.config import BrokerConfig
from kafka_emu.broker.context import ConnectionInfo
from kafka_emu.broker.dispatch import handle_frame
from kafka_emu.broker.handlers import produce as produce_handler
from kafka_emu.broker.handlers import produce_fast
from kafka_emu.broker.state import Broker
from kafka_emu.log.records import Record, build_batch
from kafka_emu.owned_bytes import OwnedBytes
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.codec import top_plan
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.preencoded import EncodedArray
from kafka_emu.protocol.messages import produce as pr

PRODUCE = BY_NAME["Produce"]
TOPICS = {"a": 3, "b": 1, "squeezed": 2}  # squeezed: cleanup.policy=compact
NAMES = [*TOPICS, *TOPICS, *TOPICS, "nope", "__consumer_offsets", "bad name!"]


class _Conn:
    auth = None
    id = 1
    peer = "127.0.0.1:1"


def _broker(brokers: int = 1) -> Broker:
    broker = Broker(BrokerConfig(brokers=brokers))
    ids = (uuid.UUID(int=(7 << 64) + i) for i in itertools.count(1))
    broker.topics.catalogue.uuid_factory = ids.__next__  # the same ids on both brokers
    for name, count in TOPICS.items():
        configs = {"cleanup.policy": "compact"} if name == "squeezed" else None
        broker.topics.create(name, count, configs=configs)
    return broker


def _send(broker: Broker, frame: bytes, node: int = 0):
    nodes = list(broker.cluster.nodes)  # (a cluster: the node the connection reached)
    info = ConnectionInfo("127.0.0.1", 1, "127.0.0.1", 9092, node_id=nodes[node % len(nodes)])
    coro = handle_frame(broker, _Conn, info, frame)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("a Produce waited")  # pragma: no cover


def _declined(ctx, request, undecoded):
    return produce_fast.NOT_TAKEN


def _generic(broker: Broker, frame: bytes, monkeypatch, node: int = 0):
    with monkeypatch.context() as m:
        m.setattr(produce_handler, "fast_answer", _declined)
        return _send(broker, frame, node)


def _state(broker: Broker) -> list:
    out = []
    for topic in broker.topics.catalogue:
        for index, log in enumerate(topic.partitions):
            out.append((topic.name, index, log.high_watermark, log.log_start_offset,
                        [bytes(b) for b in log._batches],
                        sorted((pid, repr(e)) for pid, e in log.producers.entries.items())))
    return out


@st.composite
def batches(draw):
    count = draw(st.integers(1, 8))
    keyed = draw(st.booleans())
    records = [Record(key=(b"k%d" % i) if keyed or draw(st.booleans()) else None,
                      value=draw(st.binary(max_size=150)), timestamp_ms=1_700_000_000_000 + i)
               for i in range(count)]
    pid = draw(st.sampled_from([-1, -1, 1000, 1001]))
    kwargs = {}
    if pid >= 0:
        kwargs = dict(producer_id=pid, producer_epoch=0, base_sequence=draw(st.integers(0, 6)),
                      transactional=draw(st.integers(0, 9)) == 0)
    batch = bytearray(build_batch(records, **kwargs))
    damage = draw(st.integers(0, 30))
    if damage == 0:  # a CRC that does not match
        batch[-1] ^= 0xFF
    elif damage == 1:  # cut short
        batch = batch[:draw(st.integers(0, len(batch) - 1))]
    return bytes(batch)


@st.composite
def requests(draw):
    version = draw(st.integers(3, 13))
    topics = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(NAMES))
        parts = [pr.PartitionProduceData(
            index=draw(st.sampled_from([0, 0, 1, 1, 2, -1, 3])),
            records=None if draw(st.integers(0, 20)) == 0 else draw(batches()))
            for _ in range(draw(st.integers(1, 4)))]
        topics.append((name, parts))
    acks = draw(st.sampled_from([1, 1, 1, -1, 0, 2]))
    tid = "tx" if draw(st.integers(0, 30)) == 0 else None
    return version, acks, tid, topics


def _frame(broker: Broker, version: int, acks: int, tid, topics, correlation: int) -> bytes:
    catalogue = broker.topics.catalogue
    data = []
    for name, parts in topics:
        if version >= 13:
            known = catalogue.get(name)
            topic_id = known.topic_id if known is not None else uuid.UUID(int=99)
            data.append(pr.TopicProduceData(topic_id=topic_id, partition_data=parts))
        else:
            data.append(pr.TopicProduceData(name=name, partition_data=parts))
    body = pr.ProduceRequest(transactional_id=tid, acks=acks, timeout_ms=1000, topic_data=data)
    return encode_request(PRODUCE, version, correlation, "client", body)[4:]


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(requests(), st.integers(0, 2)), min_size=1, max_size=6),
       st.integers(0, 3), st.sampled_from([1, 1, 3]))
def test_fast_path_answers_and_appends_as_the_generic_path(monkeypatch, sequence, before,
                                                           brokers):
    """(On three brokers each request reaches one of them: the partitions it does not lead
    are NOT_LEADER_OR_FOLLOWER, answered by the generic path.)"""
    trio.run(_compare, monkeypatch, sequence, before, brokers)


def _rows(broker: Broker) -> list:
    rows: list = []
    broker.observation.subscribe(rows.append, rows=True)
    return rows


def _timeless(rows: list) -> list:
    # (the time a request was handled at, and its latency, are the two brokers' own)
    return [tuple(None if i == 1 or isinstance(v, float) else v for i, v in enumerate(row))
            for row in rows]


async def _compare(monkeypatch, sequence, before, brokers):
    fast, generic = _broker(brokers), _broker(brokers)
    fast_rows, generic_rows = _rows(fast), _rows(generic)  # observed: recorded alike
    for i in range(before):  # logs that do not start at offset 0
        usual = _frame(fast, 9, 1, None, _usual(9, [0, 1, 0, 2]), 1000 + i)
        _send(fast, usual, i)
        _send(generic, usual, i)
    for correlation, ((version, acks, tid, topics), node) in enumerate(sequence):
        frame = _frame(fast, version, acks, tid, topics, correlation)
        assert frame == _frame(generic, version, acks, tid, topics, correlation)
        got = _send(fast, frame, node)
        want = _generic(generic, frame, monkeypatch, node)
        assert (None if got is None else bytes(got)) == (None if want is None else bytes(want))
        assert _state(fast) == _state(generic)
    assert _timeless(fast_rows) == _timeless(generic_rows)


def _usual(version: int, indexes) -> bytes:
    batch = build_batch([Record(key=None, value=b"v" * 100, timestamp_ms=1)])
    return [("a", [pr.PartitionProduceData(index=i, records=batch) for i in indexes])]


async def test_a_usual_request_takes_the_fast_path_and_its_response_reads_as_declared(
        monkeypatch):
    """The differential test above means something only if the fast path runs: a usual v7-v13
    request (v7-13) is answered by it (its topics are an EncodedArray), and the answer reads back as the
    generic one does."""
    taken = []
    real = produce_handler.fast_answer

    def counting(ctx, request, undecoded):
        answer = real(ctx, request, undecoded)
        taken.append(answer)
        return answer

    monkeypatch.setattr(produce_handler, "fast_answer", counting)
    for version in range(7, 14):
        fast, generic = _broker(), _broker()
        frame = _frame(fast, version, 1, None, _usual(version, [0, 1, 2, 1]), 5)
        got = _send(fast, frame)
        want = _generic(generic, frame, monkeypatch)
        assert bytes(got) == bytes(want)
        answer = taken[-1]
        assert isinstance(answer.responses, EncodedArray)
        answers = [(p.index, p.error_code, p.base_offset) for t in answer.responses
                   for p in t.partition_responses]
        assert answers == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (1, 0, 1)]
        # the EncodedArray's elements, decoded from its bytes, equal the generic answer's
        head = 9 if version >= 9 else 8  # (size, correlation id, tags from v9)
        assert answer == top_plan(pr.ProduceResponse, version).read_at(want, head, len(want))[0]
    assert len(taken) == 7


async def test_each_kind_of_partition_in_one_fast_request(monkeypatch):
    """One usual request whose partitions meet every outcome the fast path answers itself or
    hands to the log's full append: a plain batch, an idempotent one and its retry (a
    duplicate), keyless records on a compacted topic (INVALID_RECORD with record errors), a
    damaged CRC (CORRUPT_MESSAGE), a batch cut short; the same bytes and logs as the generic
    path, and the fast path took it."""
    taken = []
    real = produce_handler.fast_answer

    def counting(ctx, request, undecoded):
        answer = real(ctx, request, undecoded)
        taken.append(answer is not produce_fast.NOT_TAKEN)
        return answer

    monkeypatch.setattr(produce_handler, "fast_answer", counting)
    plain = build_batch([Record(key=None, value=b"p%d" % i, timestamp_ms=5) for i in range(3)])
    idempotent = build_batch([Record(key=b"k", value=b"i", timestamp_ms=6)], producer_id=1000,
                             producer_epoch=0, base_sequence=0)
    damaged = bytearray(plain)
    damaged[-1] ^= 0xFF
    data = lambda i, records: pr.PartitionProduceData(index=i, records=records)  # noqa: E731
    topics = [("a", [data(0, plain), data(1, idempotent), data(1, idempotent),
                     data(2, bytes(damaged)), data(2, plain[:40]), data(0, plain)]),
              ("squeezed", [data(0, plain), data(1, idempotent)])]
    for version in (7, 8, 9, 12, 13):
        fast, generic = _broker(), _broker()
        frame = _frame(fast, version, -1, None, topics, 11)
        assert bytes(_send(fast, frame)) == bytes(_generic(generic, frame, monkeypatch))
        assert _state(fast) == _state(generic)
        assert [p[2] for p in _state(fast)[:3]] == [6, 1, 0]  # hwm of a-0, a-1, a-2
    assert taken == [True] * 5


async def test_a_frame_in_a_bytearray_reads_as_bytes(monkeypatch):
    """A frame read into a buffer of its own (protocol/framing.py's ``room``: a bytearray)
    answers as the same frame in bytes, v13's topic ids included (a slice of a bytearray is
    one; ``uuid.UUID`` takes bytes only)."""
    for version in (9, 13):
        as_bytes, in_buffer = _broker(), _broker()
        frame = _frame(as_bytes, version, 1, None, _usual(version, [0, 1, 2]), 3)
        assert bytes(_send(in_buffer, bytearray(frame))) == bytes(_send(as_bytes, frame))
        assert _state(in_buffer) == _state(as_bytes)
        assert [p[2] for p in _state(in_buffer)[:3]] == [1, 1, 1]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(requests(), st.integers(0, 2)), min_size=1, max_size=6),
       st.integers(0, 3), st.sampled_from([1, 1, 3]), st.booleans())
def test_batches_kept_in_their_frame_read_as_copies(monkeypatch, sequence, before, brokers,
                                                    generic):
    """Each frame its own buffer (OwnedBytes), batches kept as views of it with their offsets
    written in place, on the fast path or the generic one: the same answers, logs (every batch
    checked again after each later request) and rows as a broker copying from ``bytes``."""
    trio.run(_compare_owned, monkeypatch, sequence, before, brokers, generic)


async def _compare_owned(monkeypatch, sequence, before, brokers, generic):
    owned, copied = _broker(brokers), _broker(brokers)
    owned_rows, copied_rows = _rows(owned), _rows(copied)

    def send(broker: Broker, frame, node: int):
        return _generic(broker, frame, monkeypatch, node) if generic else _send(broker, frame, node)

    for i in range(before):
        usual = _frame(copied, 9, 1, None, _usual(9, [0, 1, 0, 2]), 1000 + i)
        send(owned, OwnedBytes(usual), i)
        send(copied, usual, i)
    for correlation, ((version, acks, tid, topics), node) in enumerate(sequence):
        frame = _frame(copied, version, acks, tid, topics, correlation)
        got = send(owned, OwnedBytes(frame), node)
        want = send(copied, frame, node)
        assert (None if got is None else bytes(got)) == (None if want is None else bytes(want))
        assert _state(owned) == _state(copied)
    assert _timeless(owned_rows) == _timeless(copied_rows)


def _kept(broker: Broker) -> list:
    """The frames the logs keep batches of (one entry per batch kept as a view)."""
    return [batch.obj for topic in broker.topics.catalogue for log in topic.partitions
            for batch in log._batches if type(batch) is memoryview]


async def test_a_frame_of_its_own_is_kept_and_a_plain_buffer_copied(monkeypatch):
    """The property above means something only if batches are kept: from an OwnedBytes frame
    each plain batch is a view of that frame, on either path; from a plain bytearray (which its
    sender may reuse, as this test does) each batch is a copy, and sending the buffer again
    leaves the first batch as it was."""
    for generic in (False, True):
        def send(broker: Broker, frame, generic: bool = generic) -> None:
            (_generic(broker, frame, monkeypatch) if generic else _send(broker, frame))

        owned = _broker()
        first, second = (OwnedBytes(_frame(owned, 9, 1, None, _usual(9, [0, 1]), i))
                         for i in range(2))
        send(owned, first)
        send(owned, second)
        assert sorted(map(id, _kept(owned))) == sorted([id(first)] * 2 + [id(second)] * 2)
        log = owned.topics.catalogue.get("a").partitions[1]
        assert [int.from_bytes(b[:8], "big") for b in log._batches] == [0, 1]
        reused = _broker()
        buffer = bytearray(_frame(reused, 9, 1, None, _usual(9, [0]), 1))
        send(reused, buffer)
        send(reused, buffer)
        log = reused.topics.catalogue.get("a").partitions[0]
        assert _kept(reused) == [] and log.high_watermark == 2
        assert [int.from_bytes(b[:8], "big") for b in log._batches] == [0, 1]
