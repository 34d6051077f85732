"""Capture the request frames real Kafka clients send, as golden data for the codec tests.

Run once (or when a client library is upgraded)::

    .venv/bin/python tests/protocol/golden/capture.py [kafka-python confluent-kafka aiokafka]

Theory of operation. A throwaway scripted broker listens on 127.0.0.1 port 0 (plain blocking
sockets, one thread per connection; nothing of kafka-emu's broker is used). It parses every
request with our codec, records the raw frame, and answers with responses built with our codec:
just enough of a one-broker cluster with one topic of one partition for a consumer to bootstrap
(ApiVersions, Metadata), find its coordinator, join (JoinGroup v4+ first answered with
MEMBER_ID_REQUIRED, as a real broker does), sync, fetch its offsets, list offsets, fetch, send
heartbeats, commit and leave. Each client runs as a subprocess against it for a few seconds.

For every client, the first two distinct frames of each (api, version) are written to
``<client>.json`` next to this file, as hex including the int32 size prefix, with the client
library's name and version. ``test_golden.py`` decodes each (header + body) and re-encodes it
to the identical bytes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import attrs

from kafka_emu.protocol import APIS
from kafka_emu.protocol.framing import FrameBuffer
from kafka_emu.protocol.headers import (decode_request_header, encode_response, peek_api,
                                        request_header_version)
from kafka_emu.protocol.codec import read_from
from kafka_emu.protocol.messages import consumer_protocol as cp

HERE = Path(__file__).parent
TOPIC = "golden-topic"
GROUP = "golden-group"
TOPIC_ID = uuid.UUID("5a1c0de5-0000-4000-8000-00000000c0de")
MEMBER_ID_REQUIRED = 79
UNSUPPORTED_VERSION = 35
RUN_SECONDS = 6.0


def element(cls: type, name: str) -> type:
    """The struct class of the array (or struct) field ``name`` of a declaration."""
    t = attrs.fields_dict(cls)[name].metadata["kafka_emu.spec"]["type"]
    return getattr(t, "element", t)


class ScriptedBroker:
    """Answers one consumer's requests; records every frame it receives."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.host, self.port = self.sock.getsockname()[:2]
        self.frames: list[bytes] = []
        self.lock = threading.Lock()
        self.members = 0
        self.closed = False

    # -- I/O ---------------------------------------------------------------------------------
    def serve(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        frames = FrameBuffer()
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                for frame in frames.feed(chunk):
                    with self.lock:
                        self.frames.append(len(frame).to_bytes(4, "big") + frame)
                    response = self.respond(frame)
                    if response is None:
                        return
                    try:
                        conn.sendall(response)
                    except OSError:
                        return

    # -- script ------------------------------------------------------------------------------
    def respond(self, frame: bytes) -> bytes | None:
        key, version, correlation_id = peek_api(frame)
        api = APIS.get(key)
        if api is None:
            print(f"  unknown api key {key} v{version}: closing", file=sys.stderr)
            return None
        if version not in api.valid:
            if api.name == "ApiVersions":
                return encode_response(api, 0, correlation_id, api.response(
                    error_code=UNSUPPORTED_VERSION, api_keys=[self._api_version(api)]))
            print(f"  {api.name} v{version} not declared: closing", file=sys.stderr)
            return None
        _, reader = decode_request_header(frame, request_header_version(api, version))
        request = read_from(api.request, version, reader)
        handler = getattr(self, f"on_{api.name}", None)
        if handler is None:
            print(f"  no scripted answer for {api.name}: closing", file=sys.stderr)
            return None
        return encode_response(api, version, correlation_id, handler(api, version, request))

    @staticmethod
    def _api_version(api) -> Any:
        cls = element(APIS[18].response, "api_keys")
        return cls(api_key=api.key, min_version=api.valid.lo, max_version=api.valid.hi)

    def on_ApiVersions(self, api, version, request):
        return api.response(api_keys=[self._api_version(a) for a in APIS.values()])

    def on_Metadata(self, api, version, request):
        resp = api.response
        topic_cls, broker_cls = element(resp, "topics"), element(resp, "brokers")
        part_cls = element(topic_cls, "partitions")
        names = [t.name for t in request.topics or []] or [TOPIC]
        topics = [topic_cls(error_code=0 if name == TOPIC else 3, name=name,
                            topic_id=TOPIC_ID if version >= 10 else uuid.UUID(int=0),
                            partitions=[part_cls(partition_index=0, leader_id=0,
                                                 leader_epoch=0 if version >= 7 else -1,
                                                 replica_nodes=[0], isr_nodes=[0])]
                            if name == TOPIC else [])
                  for name in names]
        return resp(brokers=[broker_cls(node_id=0, host=self.host, port=self.port)],
                    cluster_id="golden-cluster" if version >= 2 else None,
                    controller_id=0 if version >= 1 else -1, topics=topics)

    def on_FindCoordinator(self, api, version, request):
        if version >= 4:
            coord = element(api.response, "coordinators")
            return api.response(coordinators=[
                coord(key=k, node_id=0, host=self.host, port=self.port)
                for k in request.coordinator_keys])
        return api.response(node_id=0, host=self.host, port=self.port)

    def on_JoinGroup(self, api, version, request):
        member_id = request.member_id
        if not member_id:
            with self.lock:
                self.members += 1
                member_id = f"golden-member-{self.members}"
            if version >= 4:
                return api.response(error_code=MEMBER_ID_REQUIRED, member_id=member_id,
                                    protocol_name="" if version < 7 else None)
        chosen = request.protocols[0]
        member = element(api.response, "members")
        return api.response(
            generation_id=1, protocol_type="consumer" if version >= 7 else None,
            protocol_name=chosen.name, leader=member_id, member_id=member_id,
            members=[member(member_id=member_id, group_instance_id=request.group_instance_id
                            if version >= 5 else None, metadata=chosen.metadata)])

    def on_SyncGroup(self, api, version, request):
        assignment = cp.encode_assignment(cp.ConsumerProtocolAssignment(
            assigned_partitions=[cp.TopicPartition(topic=TOPIC, partitions=[0])]), 0)
        return api.response(protocol_type="consumer" if version >= 5 else None,
                            protocol_name=request.protocol_name if version >= 5 else None,
                            assignment=assignment)

    def on_Heartbeat(self, api, version, request):
        return api.response()

    def on_LeaveGroup(self, api, version, request):
        if version >= 3:
            member = element(api.response, "members")
            return api.response(members=[member(member_id=m.member_id,
                                                group_instance_id=m.group_instance_id)
                                         for m in request.members])
        return api.response()

    def on_OffsetFetch(self, api, version, request):
        resp = api.response
        if version >= 8:
            group_cls = element(resp, "groups")
            topic_cls = element(group_cls, "topics")
            part_cls = element(topic_cls, "partitions")
            groups = []
            for g in request.groups:
                wanted = [(t.name, t.partition_indexes) for t in g.topics or []] or [(TOPIC, [0])]
                groups.append(group_cls(group_id=g.group_id, topics=[
                    topic_cls(name=name, partitions=[
                        part_cls(partition_index=p, committed_offset=-1, metadata="")
                        for p in parts]) for name, parts in wanted]))
            return resp(groups=groups)
        topic_cls = element(resp, "topics")
        part_cls = element(topic_cls, "partitions")
        wanted = [(t.name, t.partition_indexes) for t in request.topics or []] or [(TOPIC, [0])]
        return resp(topics=[topic_cls(name=name, partitions=[
            part_cls(partition_index=p, committed_offset=-1, metadata="") for p in parts])
            for name, parts in wanted])

    def on_ListOffsets(self, api, version, request):
        topic_cls = element(api.response, "topics")
        part_cls = element(topic_cls, "partitions")
        return api.response(topics=[topic_cls(name=t.name, partitions=[
            part_cls(partition_index=p.partition_index, timestamp=-1, offset=0,
                     leader_epoch=0 if version >= 4 else -1) for p in t.partitions])
            for t in request.topics])

    def on_Fetch(self, api, version, request):
        time.sleep(min(request.max_wait_ms, 200) / 1000)  # as a broker with no data waits
        return api.response(session_id=0)

    def on_OffsetCommit(self, api, version, request):
        topic_cls = element(api.response, "topics")
        part_cls = element(topic_cls, "partitions")
        return api.response(topics=[topic_cls(name=t.name, partitions=[
            part_cls(partition_index=p.partition_index) for p in t.partitions])
            for t in request.topics])


# --- the clients: each a small consumer script run in a subprocess ---------------------------

CLIENTS = {
    "kafka-python": """
        import time
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata
        c = KafkaConsumer(TOPIC, bootstrap_servers=BOOTSTRAP, group_id=GROUP,
                          client_id="golden-kafka-python", enable_auto_commit=False,
                          heartbeat_interval_ms=300, session_timeout_ms=10000,
                          fetch_max_wait_ms=200, **KWARGS)
        deadline = time.time() + SECONDS
        committed = False
        while time.time() < deadline:
            c.poll(timeout_ms=200)
            if not committed and c.assignment():
                c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(5, "", -1)})
                committed = True
        c.close()
    """,
    "confluent-kafka": """
        import time
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": GROUP,
                      "client.id": "golden-confluent-kafka", "enable.auto.commit": False,
                      "heartbeat.interval.ms": 300, "session.timeout.ms": 10000,
                      "fetch.wait.max.ms": 200, "topic.metadata.refresh.interval.ms": 60000})
        c.subscribe([TOPIC])
        deadline = time.time() + SECONDS
        committed = False
        while time.time() < deadline:
            c.poll(0.2)
            if not committed and c.assignment():
                c.commit(offsets=[TopicPartition(TOPIC, 0, 5)], asynchronous=False)
                committed = True
        c.close()
    """,
    "aiokafka": """
        import asyncio, time
        from aiokafka import AIOKafkaConsumer, TopicPartition
        async def main():
            c = AIOKafkaConsumer(TOPIC, bootstrap_servers=BOOTSTRAP, group_id=GROUP,
                                 client_id="golden-aiokafka", enable_auto_commit=False,
                                 heartbeat_interval_ms=300, session_timeout_ms=10000,
                                 fetch_max_wait_ms=200)
            await c.start()
            deadline = time.time() + SECONDS
            committed = False
            try:
                while time.time() < deadline:
                    await c.getmany(timeout_ms=200)
                    if not committed and c.assignment():
                        await c.commit({TopicPartition(TOPIC, 0): 5})
                        committed = True
            finally:
                await c.stop()
        asyncio.run(main())
    """,
}

# kafka-python pinned to older broker versions (its ``api_version`` setting) sends the older
# request versions, e.g. ApiVersions v0/v1, JoinGroup v0-v2, OffsetCommit v2.
CLIENTS["kafka-python-as-0.10.1"] = CLIENTS["kafka-python"]
CLIENTS["kafka-python-as-2.0"] = CLIENTS["kafka-python"]
KWARGS = {"kafka-python-as-0.10.1": "{'api_version': (0, 10, 1)}",
          "kafka-python-as-2.0": "{'api_version': (2, 0, 0)}"}

DISTRIBUTIONS = {"kafka-python": "kafka-python", "confluent-kafka": "confluent-kafka",
                 "aiokafka": "aiokafka", "kafka-python-as-0.10.1": "kafka-python",
                 "kafka-python-as-2.0": "kafka-python"}


def client_version(name: str) -> str:
    version = importlib.metadata.version(DISTRIBUTIONS[name])
    if name == "confluent-kafka":
        import confluent_kafka
        version += f" (librdkafka {confluent_kafka.libversion()[0]})"
    return version


def capture(name: str) -> list[bytes]:
    broker = ScriptedBroker()
    broker.serve()
    script = textwrap.dedent(CLIENTS[name])
    prelude = (f"TOPIC = {TOPIC!r}\nGROUP = {GROUP!r}\nSECONDS = {RUN_SECONDS!r}\n"
               f"BOOTSTRAP = '{broker.host}:{broker.port}'\n"
               f"KWARGS = {KWARGS.get(name, '{}')}\n")
    try:
        subprocess.run([sys.executable, "-c", prelude + script], timeout=RUN_SECONDS + 30,
                       check=False)
    finally:
        broker.close()
    return broker.frames


def select(frames: list[bytes]) -> tuple[list[dict], list[str]]:
    """The first two distinct frames of each declared (api, version), bodies compared without
    the correlation id; and the (api, version)s seen that our declarations do not cover (e.g.
    Fetch v3, removed in Kafka 4.0), which are left out."""
    seen: dict[tuple[int, int], list[bytes]] = {}
    chosen, left_out = [], []
    for frame in frames:
        key, version, _ = peek_api(frame[4:])
        api = APIS.get(key)
        if api is None or version not in api.valid:
            name = f"{api.name if api else f'api key {key}'} v{version}"
            if name not in left_out:
                left_out.append(name)
            continue
        same = frame[4:8] + frame[12:]  # everything but the size prefix and correlation id
        kept = seen.setdefault((key, version), [])
        if same in kept or len(kept) >= 2:
            continue
        kept.append(same)
        chosen.append({"api_key": key, "api": api.name, "api_version": version,
                       "hex": frame.hex()})
    return chosen, left_out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clients", nargs="*", help=f"any of {', '.join(CLIENTS)} (default all)")
    args = parser.parse_args()
    unknown = set(args.clients) - set(CLIENTS)
    if unknown:
        parser.error(f"unknown client(s): {', '.join(sorted(unknown))}")
    for name in args.clients or list(CLIENTS):
        print(f"capturing {name} ...")
        frames, left_out = select(capture(name))
        out = HERE / f"{name}.json"
        out.write_text(json.dumps({
            "client": DISTRIBUTIONS[name], "client_version": client_version(name),
            "client_settings": KWARGS.get(name, "defaults"),
            "captured_by": "tests/protocol/golden/capture.py",
            "note": "request frames as sent, hex, including the int32 size prefix",
            "not_declared_left_out": left_out,
            "frames": frames}, indent=1) + "\n")
        summary = ", ".join(f"{f['api']} v{f['api_version']}" for f in frames)
        print(f"  {len(frames)} frames -> {out.name}: {summary}")
        if left_out:
            print(f"  left out (not declared): {', '.join(left_out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
