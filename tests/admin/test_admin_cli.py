"""The ``versions`` command, and exit codes / one-line errors of the admin commands."""

import subprocess
import sys

import pytest

from fake_broker import FakeGroup, group_handlers
from kafka_emu.cli import main
from kafka_emu.protocol import APIS


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_versions_table(fake, capsys):
    broker = fake({"ListGroups": "0-3", "DescribeGroups": "2-9", "Heartbeat": "none",
                   "Produce": "14-15", "key:1000": "0-1"})
    code, out, err = run(capsys, "versions", "--bootstrap-server", broker.bootstrap)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (f"Broker {broker.bootstrap} (ApiVersions v3): {len(APIS)} APIs "
                        f"advertised, {len(APIS) - 2} usable by kafka-emu")
    rows = {line.split()[0] + line.split()[1]: line.split() for line in lines[3:]
            if line and not line.startswith("Known")}
    assert lines[2].split() == ["API", "KEY", "BROKER", "KAFKA-EMU", "USABLE"]
    assert rows["ListGroups16"] == ["ListGroups", "16", "0-3", "0-5", "3"]
    assert rows["DescribeGroups15"] == ["DescribeGroups", "15", "2-9", "0-6", "6"]
    assert rows["Heartbeat12"] == ["Heartbeat", "12", "-", "0-4", "unusable"]
    assert rows["UNKNOWN1000"] == ["UNKNOWN", "1000", "0-1", "-", "unusable"]
    produce = rows["Produce0"]
    assert produce[2] == "14-15" and produce[4] == "unusable"
    assert lines[-1] == "Known to kafka-emu but not advertised by the broker: Heartbeat"
    keys = [int(line.split()[1]) for line in lines[3:] if line and not line.startswith("Known")]
    assert keys == sorted(keys)


def test_versions_after_api_versions_fallback(fake, capsys):
    broker = fake({"ApiVersions": "0-1"})
    code, out, _ = run(capsys, "versions", "--bootstrap-server", broker.bootstrap)
    assert code == 0
    assert out.startswith(f"Broker {broker.bootstrap} (ApiVersions v1):")
    assert any(line.split()[:5] == ["ApiVersions", "18", "0-1", "0-4", "1"]
               for line in out.splitlines())


@pytest.mark.parametrize("argv", [
    ["groups", "--bootstrap-server", "h:1", "--list", "--bogus"],
    ["groups", "--list"],
    ["groups", "--bootstrap-server", "h:1"],
    ["groups", "--bootstrap-server", "h:1", "--list", "--describe"],
    ["groups", "--bootstrap-server", "h:1", "--describe"],
    ["groups", "--bootstrap-server", "h:1", "--describe", "--group", "g", "--state"],
    ["groups", "--bootstrap-server", "h:1", "--list", "--group", "g"],
    ["groups", "--bootstrap-server", "h:1", "--list", "--state", "sleepy"],
    ["groups", "--bootstrap-server", "nohostport", "--list"],
    ["groups", "--bootstrap-server", "h:1", "--list", "--timeout", "soon"],
    ["versions"],
    ["versions", "--bootstrap-server", "h:x"],
])
def test_bad_flags_exit_2_with_one_line(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 2
    assert out == ""
    assert err.count("\n") == 1 and "error:" in err


@pytest.mark.parametrize("argv", [["groups", "--list"], ["groups", "--describe", "--group", "g"],
                                  ["versions"]])
def test_unreachable_broker_exits_1_with_one_line(capsys, closed_port, argv):
    code, out, err = run(capsys, *argv[:1], "--bootstrap-server", f"127.0.0.1:{closed_port}",
                         *argv[1:])
    assert (code, out) == (1, "")
    assert err == (f"kafka-emu: error: cannot connect to 127.0.0.1:{closed_port}: "
                   "Connection refused\n")


def test_unresolvable_host_exits_1(capsys):
    code, _, err = run(capsys, "versions", "--bootstrap-server", "no-such-host.invalid:9092")
    assert code == 1
    assert err.startswith("kafka-emu: error: cannot resolve 'no-such-host.invalid'")
    assert err.count("\n") == 1


def test_broker_closing_the_connection_exits_1(capsys):
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def close_first():
        conn, _ = listener.accept()
        conn.recv(1024)
        conn.close()

    port = listener.getsockname()[1]
    t = threading.Thread(target=close_first, daemon=True)
    t.start()
    try:
        code, _, err = run(capsys, "versions", "--bootstrap-server", f"127.0.0.1:{port}")
    finally:
        t.join(5)
        listener.close()
    assert code == 1
    assert err == (f"kafka-emu: error: ApiVersions v3 at 127.0.0.1:{port}: "
                   "broker closed the connection\n")


def test_python_dash_m_entry_point(fake, closed_port):
    broker = fake(None, group_handlers([FakeGroup(group_id="g1")]))
    ok = subprocess.run([sys.executable, "-m", "kafka_emu", "groups", "--bootstrap-server",
                         broker.bootstrap, "--list", "--state"],
                        capture_output=True, text=True, timeout=60)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "GROUP  STATE\ng1     Stable\n", "")
    bad = subprocess.run([sys.executable, "-m", "kafka_emu", "versions", "--bootstrap-server",
                          f"127.0.0.1:{closed_port}"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stdout == "" and bad.stderr.count("\n") == 1
