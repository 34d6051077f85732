"""Capture librdkafka's KIP-932 membership frames (ShareGroupHeartbeat) for the golden tests: two
confluent-kafka ShareConsumers talk to a kafka-emu through a forwarding socket that records every
request frame they send; heartbeat frames (one per size: join, heartbeats, leave) are written to
golden/confluent-kafka-share.json. Run once: ``python tests/protocol/golden/capture_share.py``.
kafka-python ships no schema for these APIs, so these frames are their independent reference."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import confluent_kafka
from confluent_kafka import ShareConsumer

from kafka_emu.protocol import APIS, FrameBuffer
from kafka_emu.protocol.headers import peek_api
from kafka_emu.testing import make_config, run_in_thread

OUT = Path(__file__).with_name("confluent-kafka-share.json")


def forward(src, dst, frames=None):
    buf = FrameBuffer()
    try:
        while data := src.recv(65536):
            if frames is not None:
                for frame in buf.feed(data):
                    frames.append(len(frame).to_bytes(4, "big") + frame)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main() -> None:
    frames: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # Metadata must send clients back through the forwarder, not to the emulator itself.
    with run_in_thread(make_config({"advertised.port": port}, topics={"golden": 2})) as emu:

        def accept():
            while True:
                try:
                    client, _ = listener.accept()
                except OSError:
                    return
                upstream = socket.create_connection((emu.host, emu.port))
                threading.Thread(target=forward, args=(client, upstream, frames), daemon=True).start()
                threading.Thread(target=forward, args=(upstream, client), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        bootstrap = f"127.0.0.1:{port}"
        consumers = []
        for _ in range(2):
            consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": "golden-share",
                                      "client.rack": "rack-1"} if not consumers else
                                     {"bootstrap.servers": bootstrap, "group.id": "golden-share"})
            consumer.subscribe(["golden"])
            consumers.append(consumer)
        deadline = time.time() + 5
        while time.time() < deadline:
            for consumer in consumers:
                consumer.poll(0.1)
        for consumer in consumers:
            consumer.close()
        time.sleep(0.5)
        picked, seen = [], set()
    for raw in frames:
        key, version, _ = peek_api(raw[4:])
        if key != 76:
            continue
        body_kind = (key, version, len(raw))  # join, heartbeats, acks and leave differ in size
        if body_kind in seen:
            continue
        seen.add(body_kind)
        picked.append({"api_key": key, "api": APIS[key].name, "api_version": version,
                       "hex": raw.hex()})
    OUT.write_text(json.dumps({
        "client": "confluent-kafka",
        "client_version": f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})",
        "client_settings": "ShareConsumer x2, one with client.rack",
        "captured_by": "tests/protocol/golden/capture_share.py",
        "note": "request frames as sent, hex, including the int32 size prefix",
        "not_declared_left_out": [],
        "frames": picked[:8],
    }, indent=1) + "\n")
    print(f"wrote {len(picked[:8])} frames to {OUT}")


if __name__ == "__main__":
    main()
