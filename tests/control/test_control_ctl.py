"""``kafka-emu ctl`` against a live control endpoint: subcommands from the server's document,
JSON and text output, one stderr line and the documented exit code for every misuse."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any

import attrs
import pytest

from kafka_emu.cli import main
from kafka_emu.control.operations import NoParams, Operation, all_operations
from kafka_emu.testing.emulator import make_config, run_in_thread

from control_http_support import TOKEN, client_of, digest, endpoint_for


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(topics={"orders": 3}), control_port=0) as emulator:
        yield emulator


@pytest.fixture
def ctl(emu, capsys):
    """Run ``kafka-emu ctl --control <emu> ARGS`` in this process: (exit code, stdout, stderr)."""
    address = emu.control_url.removeprefix("http://")

    def run(*args: str, control: str | None = address, token: str | None = emu.control_token):
        argv = (["ctl"] + (["--control", control] if control else [])
                + (["--control-token", token] if token else []) + list(args))
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_list_names_every_operation_of_the_table(ctl):
    code, out, err = ctl("list")
    assert code == 0 and err == ""
    listed = {row["operation"]: (row["method"], row["path"]) for row in json.loads(out)}
    for name, op in all_operations().items():
        assert listed[name.replace("_", "-")] == (op.method, op.path)
    code, out, _ = ctl("-o", "text", "list")
    assert code == 0
    for name in all_operations():
        assert name.replace("_", "-") in out


def test_list_without_a_server_describes_the_installed_operations(ctl, monkeypatch):
    monkeypatch.delenv("KAFKA_EMU_CONTROL", raising=False)
    code, out, err = ctl("list", control=None)
    assert code == 0 and err == ""
    assert {row["operation"] for row in json.loads(out)} >= {
        n.replace("_", "-") for n in all_operations()}


def test_operations_run_with_flags_and_print_json_or_text(ctl):
    code, out, err = ctl("create-topic", "--name", "ctl-topic", "--partitions", "4")
    assert (code, err) == (0, "")
    assert json.loads(out)["partitions"] == 4
    code, out, _ = ctl("-o", "text", "list-topics")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["name", "topic_id", "partitions"]
    assert {r.split()[0]: int(r.split()[2]) for r in rows} == {"orders": 3, "ctl-topic": 4}
    code, out, _ = ctl("list_faults", "-o", "text")  # underscores work too
    assert (code, out) == (0, "(none)\n")


def test_operation_help_lists_its_flags(ctl):
    code, out, _ = ctl("create-topic", "--help")
    assert code == 0 and "--name" in out and "--partitions" in out


def test_operation_help_says_what_it_returns_from_the_servers_document(ctl):
    code, out, _ = ctl("advance", "--help")
    said = " ".join(out.split())
    assert code == 0 and "Returns Advanced: {members_expired, members_removed," in said
    code, out, _ = ctl("list-faults", "--help")
    assert code == 0 and "Returns a list of FaultRule: {id, action, match," in " ".join(out.split())


@pytest.mark.parametrize("args, code, words", [
    (["no-such-operation"], 2, "unknown operation"),
    (["list-topic"], 2, "did you mean list-topics"),
    (["create-topic", "--name", "x", "--bogus", "1"], 2, "unknown flag --bogus"),
    # an unknown flag is named even when a required one is missing (it said "--ms is required")
    (["advance", "--bogus", "1"], 2, "unknown flag --bogus for advance; its flags: --ms"),
    (["advance", "--mss", "1"], 2, "did you mean --ms?"),
    (["advance", "--ms", "1", "stray"], 2, "unexpected argument(s) stray"),
    (["create-topic"], 2, "create-topic needs --name"),  # required
    (["create-topic", "--name", "x", "--partitions", "many"], 2, "partitions"),
    (["create-topic", "--name", "orders"], 2, "already exists"),  # the server's 409
    (["remove-fault", "--rule-id", "999"], 2, "999"),  # the server's 404
    ([], 2, "OPERATION"),
    (["list", "extra"], 2, "no arguments"),
])
def test_misuse_is_one_stderr_line_and_exit_2(ctl, args, code, words):
    got, out, err = ctl(*args)
    assert got == code, err
    assert out == ""
    assert len(err.splitlines()) == 1 and words in err, err


def test_without_the_token_or_with_a_wrong_one_ctl_says_so_in_one_line(ctl, monkeypatch):
    monkeypatch.delenv("KAFKA_EMU_CONTROL_TOKEN", raising=False)
    for token, said in [(None, "needs its token"), ("not-the-token", "refused the token given")]:
        for args in (["list"], ["create-topic", "--name", "no-token-topic"]):
            code, out, err = ctl(*args, token=token)
            assert (code, out) == (2, ""), err
            assert len(err.splitlines()) == 1 and said in err and "--control-token" in err, err
    code, out, _ = ctl("list-topics")  # with the token: nothing was created
    assert code == 0 and "no-token-topic" not in out


def test_the_token_comes_from_the_environment_too(ctl, emu, monkeypatch):
    monkeypatch.setenv("KAFKA_EMU_CONTROL_TOKEN", emu.control_token)
    code, out, err = ctl("list-topics", token=None)
    assert (code, err) == (0, "") and "orders" in out


def test_running_an_operation_needs_a_server(ctl, monkeypatch):
    monkeypatch.delenv("KAFKA_EMU_CONTROL", raising=False)
    code, out, err = ctl("list-topics", control=None)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "--control" in err


def test_an_unreachable_server_is_one_line_and_exit_1(ctl):
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for args in (["list"], ["list-topics"]):
        code, out, err = ctl(*args, control=f"127.0.0.1:{port}")
        assert code == 1 and out == "", err
        assert len(err.splitlines()) == 1 and "cannot reach" in err, err


def test_a_bad_control_address_is_exit_2(ctl):
    code, _, err = ctl("list", control="nowhere")
    assert code == 2 and len(err.splitlines()) == 1


@attrs.frozen(kw_only=True)
class _Knobs:
    group: str
    count: int = 1
    keys: tuple[str, ...] = ()
    on: bool = False
    extra: dict | None = None
    things: tuple[Any, ...] = ()  # free-form items: JSON objects or plain values


def _knobs(broker, params):
    return attrs.asdict(params)


def test_subcommands_come_from_the_servers_document_not_the_local_table(capsys):
    """An operation only the server has, with every kind of flag: ctl still runs it."""
    table = {
        "server_only": Operation("server_only", "POST", "/knobs/{group}", _Knobs, _knobs,
                                 "echo the knobs"),
        "ping": Operation("ping", "GET", "/ping", NoParams, lambda b, p: "pong", "pong"),
    }
    assert "server_only" not in all_operations()
    with endpoint_for(table) as (url, _, errors):
        argv = ["ctl", "--control", url, "--control-token", TOKEN, "server-only", "--group", "a/b", "--count", "3",
                "--keys", "x,y", "--keys", "z", "--on", "--extra", '{"k": [1]}',
                "--things", '{"a": 1, "b": 2}', "--things", "[3, 4]", "--things", "5,6"]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert json.loads(out) == {"group": "a/b", "count": 3, "keys": ["x", "y", "z"],
                                   "on": True, "extra": {"k": [1]},
                                   "things": [{"a": 1, "b": 2}, 3, 4, 5, 6]}
        assert main(["ctl", "--control", url, "--control-token", TOKEN, "-o", "text",
                     "ping"]) == 0
        assert capsys.readouterr().out == "pong\n"
    assert errors == []


def test_the_installed_command_runs_end_to_end(emu):
    """The real entry point in a subprocess, with the address from the environment."""
    env = dict(os.environ, KAFKA_EMU_CONTROL=emu.control_url.removeprefix("http://"),
               KAFKA_EMU_CONTROL_TOKEN=emu.control_token)
    proc = subprocess.run([sys.executable, "-m", "kafka_emu", "ctl", "-o", "text", "list-topics"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "orders" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "kafka_emu", "ctl", "nope"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1


def test_serve_prints_the_bootstrap_first_then_the_control_address_and_token(capsys):
    proc = subprocess.Popen([sys.executable, "-m", "kafka_emu", "serve", "--port", "0",
                             "--control-port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        bootstrap = proc.stdout.readline().strip()
        control = proc.stdout.readline().strip()
        token = proc.stdout.readline().strip()
        host, _, port = bootstrap.rpartition(":")
        assert host == "127.0.0.1" and int(port) > 0, bootstrap
        assert control.startswith("control: http://127.0.0.1:"), control
        assert token.startswith("control-token: "), token
        address = control.removeprefix("control: ")
        token = token.removeprefix("control-token: ")
        assert main(["ctl", "--control", address, "--control-token", token, "list-topics"]) == 0
        capsys.readouterr()
        # without the token: one line, exit 2 (the server said 401)
        assert main(["ctl", "--control", address, "list-topics"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and "--control-token" in err, err
    finally:
        proc.terminate()
        proc.wait(30)
    assert proc.returncode == 0


def test_an_answer_slower_than_the_http_timeout_is_one_line_and_exit_1(capsys):
    async def slow(broker, params):
        import trio
        await trio.sleep(3)
        return "late"

    table = {"slow": Operation("slow", "POST", "/slow", NoParams, slow, "sleeps")}
    with endpoint_for(table) as (url, _, errors):
        code = main(["ctl", "--control", url, "--control-token", TOKEN, "--http-timeout", "0.5",
                     "slow"])
        out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "within 0.5 s" in err, err
    assert errors == []


def test_ctl_prints_what_http_answers_for_every_read_without_parameters(emu, ctl):
    """Every GET operation that needs no parameter, whoever registered it: ctl's JSON is the
    endpoint's result (reads whose answer moves between two calls, like a clock, are left out)."""
    with client_of(emu) as http:
        reads = digest(http)
    assert "list_topics" in reads
    for name, answer in reads.items():
        code, out, err = ctl(name.replace("_", "-"))
        assert (code, err) == (0, ""), (name, err)
        assert json.loads(out) == answer["result"], name
