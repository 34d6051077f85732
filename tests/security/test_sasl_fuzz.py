"""Hostile bytes at a SASL listener, through the real server: whatever a client sends before,
during or after authentication (random frames, random tokens for each mechanism, v0 raw
tokens, truncated SaslAuthenticate frames), the server records no internal error, the
connection either answers in order or closes, and a fresh client still logs in."""

from __future__ import annotations

import socket
import struct

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kafka_emu.testing import make_config, run_in_thread

from . import wire

SETTINGS = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "emu.sasl.users": "alice:secret",
            "connection.failed.authentication.delay.ms": "0", "emu.frame.read.timeout.ms": "2000"}


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(SETTINGS)) as emu:
        yield emu


def port(emu) -> int:
    return int(emu.listeners["SASL_PLAINTEXT"].rpartition(":")[2])


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


MECHANISMS = st.sampled_from(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER",
                              "GSSAPI", ""])
STEP = st.one_of(
    st.builds(lambda m, v: wire.handshake(v, m), MECHANISMS, st.integers(0, 1)),
    st.builds(lambda t, v: wire.authenticate(v, t), st.binary(max_size=200), st.integers(0, 2)),
    st.builds(frame, st.binary(max_size=64)),  # a raw token, or garbage
    st.just(wire.metadata_v1()), st.just(wire.api_versions_v0()),
    st.builds(lambda t: wire.authenticate(1, b"\0alice\0secret")[:t], st.integers(4, 20)),
)


def exchange(emu, steps: list[bytes]) -> None:
    with socket.create_connection(("127.0.0.1", port(emu)), timeout=10) as sock:
        try:
            for data in steps:
                sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:
            pass  # the broker closed first (reset, broken pipe, not connected): allowed


@seed(38)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(STEP, min_size=1, max_size=6))
def test_hostile_sasl_exchanges_never_break_the_server(emu, steps):
    exchange(emu, steps)
    assert emu._run(lambda: list(emu.broker.unexpected)) == []


def test_a_login_still_works_after_the_fuzz(emu):
    with socket.create_connection(("127.0.0.1", port(emu)), timeout=10) as sock:
        sock.sendall(wire.handshake(1, "PLAIN") + wire.authenticate(1, b"\0alice\0secret"))
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
            data += sock.recv(65536)
        size = struct.unpack_from(">i", data)[0]
        handshake, rest = data[4:4 + size], data[4 + size:]
        assert wire.parse_handshake(handshake)[1] == 0
        while len(rest) < 4 or len(rest) < 4 + struct.unpack_from(">i", rest)[0]:
            rest += sock.recv(65536)
        assert wire.parse_authenticate(rest[4:], 1)[1] == 0
