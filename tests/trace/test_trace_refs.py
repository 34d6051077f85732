"""The trace writer takes Heartbeats by reference (trace/refs_block.py): a batch of them goes to
the encoder as one block, and the lines it makes are the very lines the rows would have made."""

from __future__ import annotations

import marshal

import trio

from kafka_emu.broker.clock import Clock, perf_now
from kafka_emu.broker.observe import REQUEST_REFS, row_of
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafka_emu.protocol.messages.init_producer_id import (InitProducerIdRequest,
                                                          InitProducerIdResponse)
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient
from kafka_emu.trace import refs_block
from kafka_emu.trace.encoder import HEADER, format_lines, message

from test_trace_writer import only_file, read_trace

HEARTBEAT = BY_NAME["Heartbeat"]


def _heartbeats(clock: Clock, count: int = 40) -> list[tuple]:
    answers = [HeartbeatResponse(error_code=ErrorCode.NONE),
               HeartbeatResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, throttle_time_ms=3)]
    out, started = [], None
    for i in range(count):
        done = perf_now() + i * 0.0004  # several per millisecond, across a few
        request = HeartbeatRequest(group_id=f"g{i % 3}", generation_id=i, member_id=f"m{i}",
                                   group_instance_id=None if i % 2 else f"i{i}")
        out.append((REQUEST_REFS, request, answers[i % 5 == 0], started, done, clock.ms_later,
                    i % 4, f"h:{i % 4}", "Heartbeat", 12, i % 5, 1000 + i,
                    None if i == 7 else "client", "sw" if i % 3 else None, "1.0"))
        started = done
    return out


def _through_the_pipe(items: list) -> list:
    data = message(0, items)
    first, carried = marshal.loads(data[HEADER.size:])
    assert first == 0
    return carried


async def test_a_block_makes_the_rows_and_lines_the_request_path_would_have():
    for clock in (Clock(), Clock(manual=True)):
        clock.advance(1234)
        records = _heartbeats(clock)
        rows = [row_of(r) for r in records]
        block = refs_block.pack(records)
        assert block is not None and refs_block.lines([block]) == len(records)
        carried = _through_the_pipe([block])  # plain values only: marshal carries it
        assert refs_block.expand(carried[0]) == rows
        assert format_lines(5, carried, "run") == format_lines(5, rows, "run")
        # among other items, the numbering goes on after the block's lines
        mixed = [rows[0], block, {"kind": "topics_known", "at_ms": 1, "topic_partitions": []}]
        assert format_lines(0, _through_the_pipe(mixed), "r") == format_lines(
            0, [rows[0], *rows, mixed[2]], "r")


async def test_other_requests_by_reference_pack_too():
    clock = Clock()
    request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=1000,
                                    producer_id=-1, producer_epoch=-1)
    records = [(REQUEST_REFS, request, InitProducerIdResponse(producer_id=i, producer_epoch=0),
                None, perf_now(), clock.ms_later, 1, "h:1", "InitProducerId", 22, 4, i, "c",
                None, None) for i in range(5)]
    block = refs_block.pack(records)
    assert block is not None
    assert refs_block.expand(_through_the_pipe([block])[0]) == [row_of(r) for r in records]


async def test_batches_a_block_cannot_carry_are_left_to_rows(autojump_clock):
    mock = Clock()  # at_ms read at once: differing ints
    records = [(*r[:5], mock.ms_at(r[4]) + i, *r[6:]) for i, r in enumerate(_heartbeats(Clock()))]
    assert refs_block.pack(records) is None
    clock = Clock()
    mixed = _heartbeats(clock, 4)
    mixed[2] = (mixed[2][0], InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=1, producer_id=-1, producer_epoch=-1),
        *mixed[2][2:])
    assert refs_block.pack(mixed) is None
    before = _heartbeats(clock, 2)
    clock.advance(10)  # a new clock setting within one batch
    assert refs_block.pack(before + _heartbeats(clock, 2)) is None


async def test_pipelined_heartbeats_are_traced_through_blocks(tmp_path, monkeypatch):
    packed = []
    pack = refs_block.pack

    def counting(events):
        block = pack(events)
        packed.append(block is not None and len(events))
        return block
    monkeypatch.setattr(refs_block, "pack", counting)
    config = make_config({"emu.timeline.max.events": 0})  # the trace alone: by reference
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        client = await WireClient.connect(emu.host, emu.port, "refs")
        frames = b"".join(encode_request(HEARTBEAT, 4, 100 + i, "refs", HeartbeatRequest(
            group_id="g", generation_id=i, member_id=f"m{i}")) for i in range(50))
        await client.send_raw(frames)  # one write: batches of many heartbeats
        for i in range(50):
            answer = await client.receive(HEARTBEAT, 4, 100 + i)
            assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        await client.aclose()
        await trio.sleep(0.05)
    assert any(n and n > 1 for n in packed)  # blocks of several were made
    records = read_trace(only_file(tmp_path))
    assert [r["seq"] for r in records] == list(range(len(records)))
    beats = [r for r in records if r["kind"] == "request_handled" and r["api"] == "Heartbeat"]
    assert [(b["member_id"], b["correlation_id"], b["generation_id"]) for b in beats] == [
        (f"m{i}", 100 + i, i) for i in range(50)]
    assert all(b["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID and b["client_id"] == "refs"
               and b["group_id"] == "g" and b["latency_ms"] >= 0 for b in beats)
    assert records[-1]["kind"] == "run_end" and records[-1]["events"] == len(records) - 1
    assert records[-1]["dropped"] == 0
    at = [b["at_ms"] for b in beats]
    assert at == sorted(at) and records[0]["at_ms"] <= at[0]
