"""The `kafka-emu` command as a user runs it: a real subprocess."""

import os
import signal
import socket
import subprocess
import sys

import pytest

from kafka_emu.protocol import BY_NAME, decode
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse

API_VERSIONS = BY_NAME["ApiVersions"]


def run_cli(*args, timeout=20):
    return subprocess.run([sys.executable, "-m", "kafka_emu", *args], capture_output=True,
                          text=True, timeout=timeout)


def api_versions_over(host, port):
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(encode_request(API_VERSIONS, 0, 1, "cli-test", ApiVersionsRequest()))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            data += chunk
    return decode(ApiVersionsResponse, 0, data[8:])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_the_address_first_and_stops_cleanly(signum):
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--topic", "orders:3", "-c", "group.initial.rebalance.delay.ms=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline().strip()
        host, _, port = first.rpartition(":")
        assert host == "127.0.0.1" and int(port) > 0
        assert api_versions_over(host, int(port)).error_code == 0
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("args, fragment", [
    (["serve", "--bogus"], "unrecognized arguments"),
    (["serve", "--port", "70000"], "outside 0-65535"),
    (["serve", "-c", "group.max.size=abc"], "group.max.size"),
    (["serve", "-c", "no.such.config=1"], "unknown config"),
    (["serve", "-c", "novalue"], "key=value"),
    (["serve", "--topic", "orders"], "NAME:PARTITIONS"),
    (["serve", "--topic", "orders:0"], "at least 1"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_flags_get_one_line_and_exit_code_2(args, fragment):
    result = run_cli(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr


def test_port_in_use_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = run_cli("serve", "--port", str(port))
    assert result.returncode == 1
    assert "cannot listen" in result.stderr


def test_module_and_console_script_share_main():
    import kafka_emu.cli
    assert kafka_emu.cli.main is not None
    script = os.path.join(os.path.dirname(sys.executable), "kafka-emu")
    result = subprocess.run([script, "serve", "--bogus"], capture_output=True, text=True)
    assert result.returncode == 2
