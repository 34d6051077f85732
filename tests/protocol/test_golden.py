"""Golden bytes: request frames written by real clients, checked byte for byte.

The frames in golden/*.json were captured once by golden/capture.py from kafka-python (at its
defaults and pinned to older broker versions), confluent-kafka (librdkafka) and aiokafka, each
consuming from a scripted socket. Each frame must split out of the byte stream, parse (header
and body) with our codec with nothing left over, and re-encode to the identical bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_emu.protocol import APIS, FrameBuffer
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.headers import (decode_request_header, encode_request, peek_api,
                                        request_header_version)

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.json"))
FRAMES = [(path.stem, i, frame) for path in FILES
          for i, frame in enumerate(json.loads(path.read_text())["frames"])]


def _id(item):
    name, i, frame = item
    return f"{name}-{i}-{frame['api']}-v{frame['api_version']}"


def test_golden_files_exist():
    assert {p.stem for p in FILES} >= {"kafka-python", "confluent-kafka", "aiokafka"}


@pytest.mark.parametrize("item", FRAMES, ids=[_id(f) for f in FRAMES])
def test_golden_frame_decodes_and_reencodes_identically(item):
    _, _, golden = item
    raw = bytes.fromhex(golden["hex"])
    frames = list(FrameBuffer().feed(raw))
    assert len(frames) == 1 and len(frames[0]) == len(raw) - 4
    frame = frames[0]
    key, version, correlation_id = peek_api(frame)
    assert (key, version) == (golden["api_key"], golden["api_version"])
    api = APIS.get(key)
    assert api is not None and version in api.valid, (
        f"{golden['api']} v{version} is not declared (any more)")
    header, reader = decode_request_header(frame, request_header_version(api, version))
    assert header.request_api_key == key and header.correlation_id == correlation_id
    body = read_from(api.request, version, reader)
    assert reader.pos == len(frame), f"{len(frame) - reader.pos} bytes left after the body"
    assert encode_request(api, version, correlation_id, header.client_id, body) == raw


def _have(client: str) -> set[tuple[str, int]]:
    data = json.loads((GOLDEN / f"{client}.json").read_text())
    return {(f["api"], f["api_version"]) for f in data["frames"]}


@pytest.mark.parametrize("client,expected", [
    # librdkafka: ApiVersions v3 (flexible request, header v2) and JoinGroup v5
    ("confluent-kafka", {("ApiVersions", 3), ("JoinGroup", 5), ("SyncGroup", 3),
                         ("Heartbeat", 3), ("FindCoordinator", 2), ("OffsetCommit", 9),
                         ("OffsetFetch", 9), ("Metadata", 13)}),
    ("kafka-python", {("ApiVersions", 4), ("JoinGroup", 7), ("SyncGroup", 5),
                      ("Heartbeat", 4), ("FindCoordinator", 6), ("OffsetCommit", 8),
                      ("OffsetFetch", 8), ("LeaveGroup", 5)}),
    ("kafka-python-as-0.10.1", {("ApiVersions", 0), ("JoinGroup", 1), ("SyncGroup", 0),
                                ("Heartbeat", 0), ("OffsetCommit", 2), ("Metadata", 2)}),
    ("kafka-python-as-2.0", {("ApiVersions", 2), ("JoinGroup", 3), ("OffsetFetch", 4)}),
    ("aiokafka", {("ApiVersions", 0), ("JoinGroup", 5), ("SyncGroup", 3), ("Heartbeat", 1),
                  ("OffsetCommit", 3), ("FindCoordinator", 1)}),
])
def test_golden_set_covers_the_group_apis(client, expected):
    assert expected <= _have(client), sorted(expected - _have(client))


def test_join_group_frames_include_the_member_id_retry():
    # KIP-394: librdkafka's first JoinGroup v5 has an empty member id, the retry carries the
    # one the broker handed out with MEMBER_ID_REQUIRED.
    data = json.loads((GOLDEN / "confluent-kafka.json").read_text())
    api = APIS[11]
    member_ids = []
    for f in data["frames"]:
        if f["api"] == "JoinGroup":
            frame = bytes.fromhex(f["hex"])[4:]
            _, reader = decode_request_header(frame, request_header_version(api, 5))
            member_ids.append(read_from(api.request, 5, reader).member_id)
    assert member_ids[0] == "" and member_ids[1].startswith("golden-member-")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_frames_left_out_at_capture_are_still_undeclared(path):
    # capture.py keeps only frames our declarations cover; if one of these gets declared,
    # re-run the capture so that its frames are checked too
    for name in json.loads(path.read_text()).get("not_declared_left_out", []):
        api_name, version = name.rsplit(" v", 1)
        api = next((a for a in APIS.values() if a.name == api_name), None)
        assert api is None or int(version) not in api.valid, f"{name} is declared now"
