"""Malformed bodies are the client's fault: 400, nothing changed, nothing recorded as the
emulator's unexpected error (issue 33, finding 6: a deeply nested JSON body was a 500 with a
traceback, recorded, so the fixture that started the emulator failed its test at teardown)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emu.control.access import MAX_JSON_DEPTH
from kafka_emu.testing.emulator import make_config, run_in_thread

from control_http_support import client_of, digest

JSON = {"content-type": "application/json"}

BAD_BODIES = {
    "arrays 100000 deep": b"[" * 100_000 + b"]" * 100_000,
    "objects 100000 deep": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "unclosed arrays 100000 deep": b'{"ms": ' + b"[" * 100_000,
    "a value 1000 deep": b'{"ms": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    f"{MAX_JSON_DEPTH + 1} levels": b"[" * MAX_JSON_DEPTH + b"{}" + b"]" * MAX_JSON_DEPTH,
    "a 5000-digit number": b'{"ms": ' + b"9" * 5000 + b"}",
    "NaN": b'{"ms": NaN}',
    "Infinity": b'{"ms": -Infinity}',
    "a duplicate key": b'{"ms": 1, "ms": 100000}',
    "not UTF-8": b'{"ms": "\xff\xfe"}',
    "UTF-16 with a BOM": '{"ms": 1}'.encode("utf-16"),
    "a UTF-8 BOM": b'\xef\xbb\xbf{"ms": 1}',
    "a lone surrogate": b'{"ms": "\\ud800"}',
    "an array": b"[1]",
    "a number": b"1e999",
    "a string for a number": b'{"ms": "soon"}',
    "an object for a number": b'{"ms": {"ms": 1}}',
    "a list for a number": b'{"ms": [1]}',
    "null for a number": b'{"ms": null}',
    "a boolean for a number": b'{"ms": true}',
    "trailing garbage": b'{"ms": 1} {"ms": 2}',
    "NUL bytes": b'{"ms": 1\x00}',
}


def test_every_malformed_body_is_400_and_the_emulator_ends_without_an_unexpected_error():
    # run_in_thread raises EmulatorError at exit if anything was recorded: that is the check
    with run_in_thread(make_config(topics={"orders": 3}), control_port=0) as emu:
        with client_of(emu) as client:
            before = digest(client)
            for path in ["/time/advance", "/faults", "/topics", "/groups/g/offsets"]:
                for name, body in BAD_BODIES.items():
                    answer = client.post(path, content=body, headers=JSON)
                    assert answer.status_code == 400, (path, name, answer.text[:300])
                    assert answer.json()["error"]["message"], (path, name)
            deep_query = "[" * 5000 + "]" * 5000  # a GET parameter read as JSON
            answer = client.get("/timeline", params={"group_id": deep_query})
            assert answer.status_code < 500, answer.text[:300]
            assert digest(client) == before
            assert emu.unexpected_errors() == []


def test_the_deepest_allowed_body_still_gets_to_the_operation():
    with run_in_thread(control_port=0) as emu, client_of(emu) as client:
        nested = b"[" * (MAX_JSON_DEPTH - 1) + b"1" + b"]" * (MAX_JSON_DEPTH - 1)
        answer = client.post("/time/advance", content=b'{"ms": ' + nested + b"}", headers=JSON)
        # the operation itself refuses a list for ms: its own 400, not the depth limit's
        assert answer.status_code == 400 and "nests" not in answer.text, answer.text


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=20)
_bodies = st.one_of(
    st.binary(max_size=64),
    _json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["ms", "name", "partitions", "action", "api", "delay_ms",
                                     "count", "always", "error", "group_id"]),
                    _json_values, max_size=4).map(lambda v: json.dumps(v).encode()),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
)


@pytest.fixture(scope="module")
def fuzzed():
    with run_in_thread(make_config(topics={"orders": 3}), control_port=0) as emu:
        with client_of(emu) as client:
            yield emu, client


@pytest.mark.parametrize("path", ["/time/advance", "/faults", "/topics"])
def test_fuzzed_bodies_never_get_a_5xx(fuzzed, path):
    emu, client = fuzzed

    @given(_bodies)
    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def check(body):
        answer = client.post(path, content=body, headers=JSON)
        assert answer.status_code < 500, (body[:200], answer.text[:300])
        assert set(answer.json()) & {"result", "error"}

    check()
    assert emu.unexpected_errors() == []
