"""The trace writer wants no ReplyEmitted: with the trace the only sink none is built and the
writer queues the batches of rows as they come; with another sink that wants them, the writer
still writes none. Either way every request is written, in order."""

from __future__ import annotations

import pytest
import trio

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.heartbeat import HeartbeatRequest
from kafka_emu.testing import make_config
from kafka_emu.testing.emulator import open_emulator
from kafka_emu.testing.wire import WireClient

from test_trace_writer import only_file, read_trace

HEARTBEAT = BY_NAME["Heartbeat"]


@pytest.mark.parametrize("timeline", [0, 100])
async def test_heartbeats_are_written_and_no_reply_is(tmp_path, timeline):
    config = make_config({"emu.timeline.max.events": timeline})
    async with open_emulator(config, trace_dir=tmp_path) as emu:
        observation = emu._bound.broker.observation
        assert observation.replies is bool(timeline)  # built only while the timeline wants them
        client = await WireClient.connect(emu.host, emu.port, "replies")
        frames = b"".join(encode_request(HEARTBEAT, 4, 100 + i, "replies", HeartbeatRequest(
            group_id="g", generation_id=i, member_id=f"m{i}")) for i in range(30))
        await client.send_raw(frames)  # one write: batches of several
        for i in range(30):
            assert (await client.receive(HEARTBEAT, 4, 100 + i)).error_code == (
                ErrorCode.UNKNOWN_MEMBER_ID)
        await client.aclose()
        if timeline:
            replies = await emu.timeline(types=("ReplyEmitted",))
            assert len(replies) == 30
        await trio.sleep(0.05)
    records = read_trace(only_file(tmp_path))
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert not any("reply" in r["kind"] for r in records)
    beats = [r for r in records if r["kind"] == "request_handled" and r["api"] == "Heartbeat"]
    assert [(b["member_id"], b["correlation_id"]) for b in beats] == [
        (f"m{i}", 100 + i) for i in range(30)]
    assert records[-1]["kind"] == "run_end" and records[-1]["dropped"] == 0
