"""Security benchmark (issue 38): what SASL and TLS cost, against PLAINTEXT, in one run.

Run with ``.venv/bin/python bench/bench_security.py``. Not a test: it prints a table and ratios,
and always exits 0. One emulator (in a thread) with three listeners: PLAINTEXT, SASL_PLAINTEXT
and SASL_SSL (the generated CA; EC P-256 certificate; TLS 1.3).

1. Connection setup: TCP connect (+ the TLS handshake) + ApiVersions + SaslHandshake v1 +
   SaslAuthenticate v2 round trips (PLAIN: one; SCRAM-SHA-256 at 4096 iterations: two, with the
   client's PBKDF2 precomputed so the server's work is what is timed), then one Metadata.
   Median and p90 over ``--connections`` connections per case, made one after another.
2. Heartbeat throughput: one member joins a classic group on the listener, then sends
   Heartbeat v4 one at a time (each waits for its answer, as a client does) for ``--seconds``;
   heartbeats per second on each listener.

Ratios are each case over PLAINTEXT. The client is plain Python (blocking sockets and the ssl
module) using kafka-emu's codec; it shares the machine's cores with the server, so absolute
figures move with the load; the ratios in one run are what to read.
"""

from __future__ import annotations

import argparse
import socket
import ssl
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kafka_emu.protocol.codec import read_from  # noqa: E402
from kafka_emu.protocol.headers import (ResponseHeader, encode_request,  # noqa: E402
                                        response_header_version)
from kafka_emu.protocol.messages import api_versions as av  # noqa: E402
from kafka_emu.protocol.messages import heartbeat as hb  # noqa: E402
from kafka_emu.protocol.messages import join_group as jg  # noqa: E402
from kafka_emu.protocol.messages import metadata as md  # noqa: E402
from kafka_emu.protocol.messages import sasl_authenticate as sa  # noqa: E402
from kafka_emu.protocol.messages import sasl_handshake as sh  # noqa: E402
from kafka_emu.protocol.messages import sync_group as sg  # noqa: E402
from kafka_emu.protocol.primitives import Reader  # noqa: E402
from kafka_emu.testing import make_config, run_in_thread  # noqa: E402

LISTENERS = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"


class Client:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.ids = 0
        self.buffer = b""

    def call(self, api, version: int, body):
        self.ids += 1
        self.sock.sendall(encode_request(api, version, self.ids, "bench", body))
        while True:
            if len(self.buffer) >= 4:
                (size,) = struct.unpack_from(">i", self.buffer)
                if len(self.buffer) >= 4 + size:
                    frame, self.buffer = self.buffer[4:4 + size], self.buffer[4 + size:]
                    break
            more = self.sock.recv(65536)
            if not more:
                raise ConnectionError("closed by the broker")
            self.buffer += more
        reader = Reader(frame)
        read_from(ResponseHeader, response_header_version(api, version), reader)
        return read_from(api.response, version, reader)


def scram_client_final(server_first: bytes, nonce: str, salted: dict) -> bytes:
    import base64
    import hashlib
    import hmac
    attrs = dict(p.split("=", 1) for p in server_first.decode().split(","))
    key = (attrs["s"], int(attrs["i"]))
    if key not in salted:  # the client's PBKDF2, once per salt (the server's is per login)
        salted[key] = hashlib.pbkdf2_hmac("sha256", b"alice-secret",
                                          base64.b64decode(attrs["s"]), key[1])
    salted_password = salted[key]
    client_key = hmac.new(salted_password, b"Client Key", "sha256").digest()
    stored = hashlib.sha256(client_key).digest()
    without_proof = f"c=biws,r={attrs['r']}"
    auth = f"n=alice,r={nonce},{server_first.decode()},{without_proof}".encode()
    signature = hmac.new(stored, auth, "sha256").digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def connect(address: tuple[str, int], tls: ssl.SSLContext | None, mechanism: str | None,
            salted: dict) -> Client:
    sock = socket.create_connection(address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls is not None:
        sock = tls.wrap_socket(sock, server_hostname="localhost")
    client = Client(sock)
    client.call(av.API, 3, av.ApiVersionsRequest(client_software_name="bench",
                                                 client_software_version="1"))
    if mechanism is not None:
        assert client.call(sh.API, 1, sh.SaslHandshakeRequest(mechanism=mechanism)).error_code == 0
        if mechanism == "PLAIN":
            answer = client.call(sa.API, 2, sa.SaslAuthenticateRequest(
                auth_bytes=b"\0alice\0alice-secret"))
        else:
            nonce = "benchnonce%d" % time.perf_counter_ns()
            first = client.call(sa.API, 2, sa.SaslAuthenticateRequest(
                auth_bytes=f"n,,n=alice,r={nonce}".encode()))
            final = scram_client_final(first.auth_bytes, nonce, salted)
            answer = client.call(sa.API, 2, sa.SaslAuthenticateRequest(auth_bytes=final))
        assert answer.error_code == 0, answer
    client.call(md.API, 12, md.MetadataRequest(topics=[]))
    return client


def setup_times(address, tls, mechanism, n: int) -> list[float]:
    salted: dict = {}
    times = []
    for _ in range(n):
        start = time.perf_counter()
        client = connect(address, tls, mechanism, salted)
        times.append((time.perf_counter() - start) * 1000)
        client.sock.close()
    return times


def heartbeats_per_second(address, tls, mechanism, seconds: float, group: str) -> float:
    client = connect(address, tls, mechanism, {})
    protocols = [jg.JoinGroupRequestProtocol(name="range", metadata=b"\0\0\0\0\0\0\0\0\0\0")]
    join = jg.JoinGroupRequest(group_id=group, session_timeout_ms=30000,
                               rebalance_timeout_ms=30000, member_id="",
                               protocol_type="consumer", protocols=protocols)
    first = client.call(jg.API, 7, join)
    joined = client.call(jg.API, 7, jg.JoinGroupRequest(
        group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
        member_id=first.member_id, protocol_type="consumer", protocols=protocols))
    assert joined.error_code == 0, joined
    client.call(sg.API, 5, sg.SyncGroupRequest(
        group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
        protocol_type="consumer", protocol_name="range",
        assignments=[sg.SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")]))
    beat = hb.HeartbeatRequest(group_id=group, generation_id=joined.generation_id,
                               member_id=joined.member_id)
    count, start = 0, time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        for _ in range(50):
            assert client.call(hb.API, 4, beat).error_code == 0
        count += 50
    rate = count / (time.perf_counter() - start)
    client.sock.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    settings = {"listeners": LISTENERS, "emu.sasl.users": "alice:alice-secret",
                "group.initial.rebalance.delay.ms": "0"}
    with run_in_thread(make_config(settings)) as emu:
        def address(name: str) -> tuple[str, int]:
            host, _, port = emu.listeners[name].rpartition(":")
            return host, int(port)
        tls = ssl.create_default_context(cafile=emu.ca_file)
        cases = [("PLAINTEXT", "PLAINTEXT", None, None),
                 ("SASL_PLAINTEXT PLAIN", "SASL_PLAINTEXT", None, "PLAIN"),
                 ("SASL_PLAINTEXT SCRAM-SHA-256", "SASL_PLAINTEXT", None, "SCRAM-SHA-256"),
                 ("SASL_SSL PLAIN", "SASL_SSL", tls, "PLAIN"),
                 ("SASL_SSL SCRAM-SHA-256", "SASL_SSL", tls, "SCRAM-SHA-256")]
        print(f"connection setup ({args.connections} connections each; ms)")
        print(f"  {'case':32} {'median':>8} {'p90':>8} {'ratio':>7}")
        base = None
        for label, listener, context, mechanism in cases:
            times = setup_times(address(listener), context, mechanism, args.connections)
            median = statistics.median(times)
            p90 = statistics.quantiles(times, n=10)[-1]
            base = base or median
            print(f"  {label:32} {median:8.3f} {p90:8.3f} {median / base:7.2f}")
        print(f"heartbeat throughput (one member, one at a time, {args.seconds:.0f} s; per s)")
        print(f"  {'case':32} {'rate':>8} {'ratio':>7}")
        base_rate = None
        for number, (label, listener, context, mechanism) in enumerate(cases):
            if mechanism == "SCRAM-SHA-256":
                continue  # the session is the same as PLAIN's once authenticated
            rate = heartbeats_per_second(address(listener), context, mechanism, args.seconds,
                                         f"bench-{number}")
            base_rate = base_rate or rate
            print(f"  {label:32} {rate:8.0f} {rate / base_rate:7.2f}")


if __name__ == "__main__":
    main()
