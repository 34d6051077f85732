"""librdkafka's own ShareGroupHeartbeat frames (golden/confluent-kafka-share.json, captured by
golden/capture_share.py from confluent-kafka 2.16.1's ShareConsumer) mean what our declaration
says: decoding and re-encoding them byte for byte (test_golden.py) cannot tell two swapped fields
apart, so the values are checked here."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_emu.protocol import APIS
from kafka_emu.protocol.headers import decode_request

FRAMES = json.loads((Path(__file__).parent / "golden" / "confluent-kafka-share.json").read_text())


def decoded():
    for frame in FRAMES["frames"]:
        header, body, left = decode_request(APIS[76], frame["api_version"],
                                            bytes.fromhex(frame["hex"])[4:])
        assert left == 0
        yield header, body


def test_share_consumer_frames_decode_to_what_librdkafka_sent():
    bodies = [body for _, body in decoded()]
    assert {f["api_version"] for f in FRAMES["frames"]} == {1}
    joins = [b for b in bodies if b.member_epoch == 0]
    assert joins and all(b.subscribed_topic_names == ["golden"] for b in joins)
    assert all(b.group_id == "golden-share" for b in bodies)
    # the client made its member ids: Uuids as 22 base64 characters
    assert all(len(b.member_id) == 22 for b in bodies)
    assert {b.rack_id for b in joins} == {None, "rack-1"}
    assert any(b.member_epoch > 0 and b.subscribed_topic_names is None for b in bodies)
