"""Every startup error of `kafka-emu` is one line on stderr and an exit code: 2 when the input
is wrong, 1 when the environment is in the way; never a traceback. Plus the small courtesies:
--version, usage on a bare call, any-case log levels, SIGPIPE-safe output, IPv6 in brackets,
and a clear word when the admin tools are pointed at something that is not a Kafka broker."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading

import pytest

import kafka_emu
from kafka_emu.admin.client import AdminClient
from kafka_emu.testing import make_config, run_in_thread


def run_cli(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "kafka_emu", *args], capture_output=True,
                          text=True, timeout=timeout)


def one_line(result, code: int, fragment: str) -> str:
    lines = result.stderr.splitlines()
    assert (result.returncode, len(lines)) == (code, 1), result.stderr
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def has_ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("args, fragment", [
    (["--topic", "bad/name:3"], "invalid topic name"),
    (["--topic", "..:1"], "invalid topic name"),
    (["-c", "emu.api.max.versions=Nope:1"], "unknown API name 'Nope'"),
    (["-c", "emu.api.max.versions=JoinGroup"], "ApiName:maxVersion"),
    (["--host", "no-such-host.invalid"], "unknown host"),
    (["--host", "192.0.2.1"], "not an address of this machine"),  # TEST-NET-1, never local
    (["--log-level", "chatty"], "--log-level"),
])
def test_bad_serve_input_is_one_line_and_exit_2(args, fragment):
    one_line(run_cli("serve", "--port", "0", *args), 2, fragment)


def test_port_in_use_is_one_line_and_exit_1():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = one_line(run_cli("serve", "--port", str(port)), 1, "cannot listen")
    assert line == f"kafka-emu: error: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_version_comes_from_the_package():
    result = run_cli("--version")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"kafka-emu {kafka_emu.__version__}\n", "")


def test_bare_invocation_prints_usage():
    result = run_cli()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: kafka-emu")
    assert all(cmd in result.stderr for cmd in ("serve", "groups", "versions"))


def serve(*args):
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline().strip()
    return proc, first


def stop(proc):
    proc.terminate()
    try:
        return proc.wait(timeout=10)
    finally:
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("level", ["debug", "Info", "WARNING"])
def test_log_level_in_any_case(level):
    proc, first = serve("--log-level", level)
    try:
        assert first.startswith("127.0.0.1:"), proc.stderr.read()
    finally:
        assert stop(proc) == 0


@pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback here")
def test_ipv6_addresses_are_printed_in_brackets():
    proc, first = serve("--host", "::1")
    try:
        assert first.startswith("[::1]:"), first
        with AdminClient(first) as client:  # what a client parses
            assert client.list_groups() == []
    finally:
        assert stop(proc) == 0
    with run_in_thread(make_config(host="::1")) as emu:
        assert emu.bootstrap_servers == f"[::1]:{emu.port}"
        with AdminClient(emu.bootstrap_servers) as client:
            assert client.list_groups() == []


@pytest.fixture
def emu():
    with run_in_thread() as emulator:
        yield emulator


@pytest.mark.parametrize("command", [["versions"], ["groups", "--list", "--state"]])
def test_output_into_a_closed_pipe_is_quiet(emu, command):
    # `kafka-emu versions | head -0`: the reader is gone before the first line is written.
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", command[0], "--bootstrap-server",
                             emu.bootstrap_servers, *command[1:]],
                            stdout=write_end, stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    os.close(read_end)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (1, "")


class _Http(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


def test_admin_tools_say_when_the_peer_is_not_a_kafka_broker():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Http)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        for command in (["versions"], ["groups", "--list"]):
            line = one_line(run_cli(command[0], "--bootstrap-server", f"127.0.0.1:{port}",
                                    *command[1:]), 1, "is not a Kafka broker")
            assert line == (f"kafka-emu: error: 127.0.0.1:{port} is not a Kafka broker: "
                            "it answered like an HTTP server ('<!DOCTYPE HTML>')")
    finally:
        server.shutdown()
        server.server_close()
