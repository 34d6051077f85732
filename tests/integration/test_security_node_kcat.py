"""kafkajs and kcat over SASL_SSL and SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
OAUTHBEARER (kafkajs with an unsecured JWS from its token provider, kcat with librdkafka's own),
and a wrong password answered as Kafka answers it."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from kafka_emu.testing import make_config, run_in_thread

from .test_node_clients import NODE_DIR, run_node  # node_modules: tests/conftest.py

SETTINGS = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "emu.sasl.users": "alice:alice-secret",
            "connection.failed.authentication.delay.ms": "0"}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
PROTOCOLS = ["SASL_SSL", "SASL_PLAINTEXT"]


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(SETTINGS, topics={"secure": 1})) as emu:
        yield emu


def kafkajs(emu, protocol, mechanism, password="alice-secret") -> dict:
    opts = {"brokers": emu.listeners[protocol], "mechanism": mechanism, "username": "alice",
            "password": password, "topic": "secure", "retries": 0 if password != "alice-secret" else 3}
    if protocol == "SASL_SSL":
        opts["ca"] = emu.ca_file
    proc = run_node(NODE_DIR / "security.mjs", json.dumps(opts))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"no RESULT line: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS + ["OAUTHBEARER"])
def test_kafkajs_produces_and_consumes(emu, node_modules, protocol, mechanism):  # noqa: F811
    result = kafkajs(emu, protocol, mechanism)
    assert result == {"ok": True}, result


def test_kafkajs_wrong_password(emu, node_modules):  # noqa: F811
    result = kafkajs(emu, "SASL_SSL", "SCRAM-SHA-512", password="wrong")
    assert result["ok"] is False
    assert result["type"] == "KafkaJSSASLAuthenticationError", result
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in result["error"], result


@pytest.fixture(scope="module")
def kcat() -> str:
    path = shutil.which("kcat")
    if path is None:
        pytest.skip("kcat not on PATH (Debian: apt-get install -y kcat)")
    return path


def run_kcat(kcat, emu, protocol, mechanism, *args, stdin=None, password="alice-secret",
             quiet=True):
    cmd = [kcat, "-b", emu.listeners[protocol], "-X", f"security.protocol={protocol}",
           "-X", f"sasl.mechanisms={mechanism}", *(["-q"] if quiet else []),
           "-m", "20" if quiet else "3"]
    if mechanism == "OAUTHBEARER":
        cmd += ["-X", "enable.sasl.oauthbearer.unsecure.jwt=true",
                "-X", "sasl.oauthbearer.config=principal=alice"]
    else:
        cmd += ["-X", "sasl.username=alice", "-X", f"sasl.password={password}"]
    if protocol == "SASL_SSL":
        cmd += ["-X", f"ssl.ca.location={emu.ca_file}"]
    return subprocess.run(cmd + list(args), input=stdin, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS + ["OAUTHBEARER"])
def test_kcat_produces_and_consumes(emu, kcat, protocol, mechanism):
    value = f"kcat-{protocol}-{mechanism}"
    produced = run_kcat(kcat, emu, protocol, mechanism, "-P", "-t", "secure", stdin=value + "\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run_kcat(kcat, emu, protocol, mechanism, "-C", "-t", "secure", "-e", "-o",
                        "beginning")
    assert consumed.returncode == 0, consumed.stderr
    assert value in consumed.stdout.splitlines()


def test_kcat_wrong_password(emu, kcat):
    proc = run_kcat(kcat, emu, "SASL_PLAINTEXT", "PLAIN", "-L", password="wrong",
                    quiet=False)
    assert proc.returncode != 0
    assert "Authentication failed: Invalid username or password" in proc.stderr
