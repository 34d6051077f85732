"""Capture librdkafka's KIP-848 request frames (ConsumerGroupHeartbeat) for the golden tests: a
consumer with group.protocol=consumer talks to a kafka-emu through a forwarding socket that
records every request frame it sends; heartbeat frames (one per size: join, heartbeats,
acknowledgements, leave) are written to
golden/confluent-kafka-kip848.json. Run once: ``python tests/protocol/golden/capture_kip848.py``.
kafka-python ships no schema for these APIs, so these frames are their independent reference."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import confluent_kafka
from confluent_kafka import Consumer

from kafka_emu.protocol import APIS, FrameBuffer
from kafka_emu.protocol.headers import peek_api
from kafka_emu.testing import make_config, run_in_thread

OUT = Path(__file__).with_name("confluent-kafka-kip848.json")


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
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "golden-group",
                             "group.protocol": "consumer", "group.instance.id": "golden-1"})
        consumer.subscribe(["^gold.*"])
        deadline = time.time() + 20
        while time.time() < deadline and not consumer.assignment():
            consumer.poll(0.1)
        consumer.close()
        time.sleep(0.5)
        picked, seen = [], set()
    for raw in frames:
        key, version, _ = peek_api(raw[4:])
        if key not in (68, 69):
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
        "client_settings": "group.protocol=consumer, group.instance.id, regex subscription",
        "captured_by": "tests/protocol/golden/capture_kip848.py",
        "note": "request frames as sent, hex, including the int32 size prefix",
        "not_declared_left_out": [],
        "frames": picked[:8],
    }, indent=1) + "\n")
    print(f"wrote {len(picked[:8])} frames to {OUT}")


if __name__ == "__main__":
    main()
