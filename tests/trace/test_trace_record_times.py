"""The clock readings of records by frame (``REQUEST_FRAME``, broker/dispatch.py): within a batch
a request starts when the one before it ends, and each record holds floats of its own -- never the
previous record's ``done`` object as its ``started`` -- so that marshal (the writer's packs) writes
them as they are instead of entering every such float in its table of shared objects and looking
it up again. Over a real socket, pipelined Heartbeats in one write (one batch)."""

from __future__ import annotations

import marshal

import trio

from kafka_emu.broker.event_rows import REQUEST_FRAME
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient

from test_trace_writer import only_file, read_trace

HEARTBEAT = BY_NAME["Heartbeat"]
COUNT = 12


async def _batches(tmp_path) -> list[list[tuple]]:
    """The records by frame of each batch the seam handed the trace writer."""
    config = make_config({"emu.timeline.max.events": 0})
    batches: list[list[tuple]] = []
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        observation = emu._bound.broker.observation
        sink, _, writer_many, *rest = observation._sinks[-1]  # (the trace writer, alone)

        def spy(events):  # the batch as the seam hands it over, then to the writer
            batches.append([e for e in events if type(e) is tuple and e[0] == REQUEST_FRAME])
            writer_many(events)
        observation._sinks[-1] = (sink, True, spy, *rest)
        observation._rebuild()
        client = await WireClient.connect(emu.host, emu.port, "times")
        # (the first Heartbeat the server meets is recorded as its row: BY_FRAME fills then)
        await client.send_raw(encode_request(HEARTBEAT, 4, 99, "times", HeartbeatRequest(
            group_id="g", generation_id=1, member_id="m")))
        await client.receive(HEARTBEAT, 4, 99)
        await client.send_raw(b"".join(encode_request(
            HEARTBEAT, 4, 100 + i, "times", HeartbeatRequest(
                group_id="g", generation_id=1, member_id="m")) for i in range(COUNT)))
        for i in range(COUNT):
            assert (await client.receive(HEARTBEAT, 4, 100 + i)).error_code == (
                ErrorCode.UNKNOWN_MEMBER_ID)
        await client.aclose()
        await trio.sleep(0.05)
    records = read_trace(only_file(tmp_path))
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
    assert sum(r["kind"] == "request_handled" for r in records) == COUNT + 1
    return [batch for batch in batches if batch]


async def test_a_request_starts_when_the_previous_ends_with_a_float_of_its_own(tmp_path):
    batches = await _batches(tmp_path)
    records = [record for batch in batches for record in batch]
    assert len(records) >= COUNT
    assert max(map(len, batches)) > 1  # (some of them pipelined in one batch)
    pairs = [(before, after) for batch in batches for before, after in zip(batch, batch[1:])]
    assert pairs
    for before, after in pairs:
        assert type(after[3]) is float and after[3] == before[4]  # starts where the other ended
        assert after[3] is not before[4]  # but not the same object (marshal's table)
    for record in records:
        assert record[3] <= record[4]
    # (what that buys: marshal enters none of these floats in its table of shared objects)
    shared = {id(value) for record in records for value in record[3:5]}
    assert len(shared) == 2 * len(records)
    assert marshal.loads(marshal.dumps(records, 4)) == records
