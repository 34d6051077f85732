"""Fault rules that know about authentication (issue #38 item 5): matching by the connection's
principal (a glob) and listener, logins matched only by rules naming SaslAuthenticate, and the
validation every surface shares (Python, HTTP, ``kafka-emu ctl``): bad input is a 4xx naming
the problem, and nothing is added."""

from __future__ import annotations

import json

import pytest

from kafka_emu.cli import main
from kafka_emu.control.faults import FaultRules, rule_spec
from kafka_emu.control.operations import ControlError
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import sasl_authenticate as sa
from kafka_emu.testing import make_config, run_in_thread

from control_http_support import client_of

OC, SASL_AUTH = 8, 36


class FakeBroker:
    faults = None
    fault_rules = None


def store_of(*specs):
    broker = FakeBroker()
    store = FaultRules(broker)
    for spec in specs:
        store.add(**rule_spec(**spec))
    return store


def commit():
    return oc.OffsetCommitRequest(group_id="g", member_id="m", topics=[])


def test_principal_glob_and_listener_match_the_connection():
    store = store_of(dict(action="close_before", principal="User:ali*", listener="sasl_plaintext",
                          always=True))
    rule = store.rules[1]
    assert rule.describe()["match"] == {"principal": "User:ali*", "listener": "SASL_PLAINTEXT"}
    assert store.match(OC, 8, "c", commit(), "User:bob", "SASL_PLAINTEXT") is None
    assert store.match(OC, 8, "c", commit(), "User:alice", "PLAINTEXT") is None
    assert store.match(OC, 8, "c", commit()) is None  # User:ANONYMOUS on PLAINTEXT
    fired = store.match(OC, 8, "c", commit(), "User:alice", "SASL_PLAINTEXT")
    assert fired is not None and fired.action == "close_before"
    assert (rule.matched, rule.fired) == (1, 1)  # only the matching request counted


def test_a_login_is_matched_only_by_rules_naming_sasl_authenticate():
    login = sa.SaslAuthenticateRequest(auth_bytes=b"\0alice\0pw")
    store = store_of(dict(action="error", principal="User:alice", error="TOPIC_AUTHORIZATION_FAILED"),
                     dict(action="error", api="SaslAuthenticate", principal="User:alice",
                          error="SASL_AUTHENTICATION_FAILED"))
    # alice's login: the first rule (every request of alice) must not break it
    fired = store.match(SASL_AUTH, 2, "c", login, "User:alice", "SASL_PLAINTEXT", login=True)
    assert fired is not None and fired.rule_id == 2 and fired.error_code.name == \
        "SASL_AUTHENTICATION_FAILED"
    assert store.rules[1].matched == 0
    # bob's login passes; alice's produce meets the first rule
    assert store.match(SASL_AUTH, 2, "c", login, "User:bob", "SASL_PLAINTEXT", login=True) is None
    assert store.match(0, 9, "c", commit(), "User:alice", "SASL_PLAINTEXT").rule_id == 1


@pytest.mark.parametrize("spec,problem", [
    (dict(action="error", error=58, principal="alice"), "type:name"),
    (dict(action="error", error=58, principal="User:"), "type:name"),
    (dict(action="error", error=58, principal=":alice"), "type:name"),
    (dict(action="error", error=58, listener="  "), "listener name"),
    (dict(action="throttle", throttle_ms=5, api="SaslAuthenticate"), "does not apply to "
                                                                     "SaslAuthenticate"),
    (dict(action="close_after", api=36), "does not apply to SaslAuthenticate"),
])
def test_bad_auth_rules_are_refused_and_nothing_is_added(spec, problem):
    broker = FakeBroker()
    store = FaultRules(broker)
    with pytest.raises(ControlError) as info:
        store.add(**rule_spec(**spec))
    assert problem in info.value.message and info.value.status == 400
    assert store.rules == {} and broker.faults is None


SETTINGS = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms": "PLAIN", "emu.sasl.users": "alice:a,bob:b"}


@pytest.fixture(scope="module")
def emu():
    with run_in_thread(make_config(SETTINGS), control_port=0) as emulator:
        yield emulator


def test_python_http_and_ctl_take_principal_and_listener(emu, capsys):
    emu.clear_faults()
    rid = emu.add_fault("error", api="Produce", principal="User:alice",
                        listener="SASL_PLAINTEXT", error="TOPIC_AUTHORIZATION_FAILED")
    with pytest.raises(ControlError) as info:
        emu.add_fault("error", api="Produce", listener="INTERNAL", error=29)
    assert "unknown listener 'INTERNAL'" in info.value.message
    assert "PLAINTEXT, SASL_PLAINTEXT" in info.value.message
    with client_of(emu) as http:
        bad = http.post("/faults", json={"action": "error", "error": 58, "principal": "bob"})
        assert bad.status_code == 400 and "type:name" in bad.json()["error"]["message"]
        bad = http.post("/faults", json={"action": "close_before", "listener": "SSL"})
        assert bad.status_code == 400 and "unknown listener" in bad.json()["error"]["message"]
        good = http.post("/faults", json={"action": "error", "api": "SaslAuthenticate",
                                          "principal": "User:bob", "error": 58})
        assert good.status_code == 200, good.text
        assert good.json()["result"]["match"] == {"api": "SaslAuthenticate", "principal": "User:bob"}
    code = main(["ctl", "--control", emu.control_url.removeprefix("http://"),
                 "--control-token", emu.control_token, "add-fault", "--action", "close_before",
                 "--principal", "User:*", "--listener", "sasl_plaintext"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["match"] == {"principal": "User:*", "listener": "SASL_PLAINTEXT"}
    listed = emu.faults()
    assert [r["id"] for r in listed] == [rid, rid + 1, rid + 2]  # the refused ones: nothing
    assert listed[0]["match"] == {"api": "Produce", "principal": "User:alice",
                                  "listener": "SASL_PLAINTEXT"}
    emu.clear_faults()
