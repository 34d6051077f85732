"""The HTTP control endpoint with a real HTTP client (httpx) over real sockets.

Generic tests run over whatever the operations table holds (every module of control/ops), so
operations other branches register are covered without a line here: each appears in the OpenAPI
document at its method and path, and bad input to each gets a 4xx JSON error and changes nothing.
"""

from __future__ import annotations

import threading

import attrs
import httpx
import pytest
import trio
from openapi_spec_validator import validate

from kafka_emu.control.http import ControlApp
from kafka_emu.control.openapi import json_schema, path_params
from kafka_emu.control.operations import (ControlError, NoParams, Operation, _hints,
                                          all_operations)
from kafka_emu.testing.emulator import make_config, run_in_thread

from control_http_support import AUTH, client_of, digest, dummy_path, endpoint_for

TOPICS = {"orders": 3}


@pytest.fixture
def emu():
    with run_in_thread(make_config({"group.initial.rebalance.delay.ms": 0}, topics=TOPICS),
                       control_port=0) as emulator:
        yield emulator


@pytest.fixture
def client(emu):
    with client_of(emu) as http:
        yield http


def _error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    return body["error"]


# -- the endpoint itself --------------------------------------------------------------------

def test_health_and_a_valid_openapi_document_naming_every_operation(client):
    assert client.get("/health").json()["status"] == "up"
    document = client.get("/openapi.json").json()
    validate(document)  # raises if it is not a valid OpenAPI 3.1 document
    assert document["openapi"].startswith("3.1")
    ids = {spec["operationId"]: (method.upper(), path)
           for path, item in document["paths"].items() for method, spec in item.items()}
    operations = all_operations()
    assert operations, "the table is empty"
    for name, op in operations.items():
        assert ids.get(name) == (op.method, op.path), name


def test_the_document_describes_each_parameter_where_the_endpoint_reads_it(client):
    document = client.get("/openapi.json").json()
    for op in all_operations().values():
        spec = document["paths"][op.path][op.method.lower()]
        hints = _hints(op.params)
        in_path = path_params(op)
        listed = {p["name"]: p for p in spec.get("parameters", [])}
        body = spec.get("requestBody", {}).get("content", {}).get("application/json", {})
        properties = body.get("schema", {}).get("properties", {})
        for field in attrs.fields(op.params):
            where = ("path" if field.name in in_path else "query" if op.method == "GET"
                     else "body")
            if where == "body":
                schema = properties[field.name]
            else:
                assert listed[field.name]["in"] == where, (op.name, field.name)
                schema = listed[field.name]["schema"]
            expected = json_schema(hints[field.name])
            assert {k: schema[k] for k in expected} == expected, (op.name, field.name)


def test_no_two_operations_share_a_method_and_path():
    ControlApp(broker=None)  # raises naming both operations if two would answer one request
    table = {"a": Operation("a", "GET", "/x/{one}", _OneTwo, _echo, "a"),
             "b": Operation("b", "GET", "/x/{two}", _OneTwo, _echo, "b")}
    with pytest.raises(RuntimeError, match="a and b are both GET"):
        ControlApp(broker=None, operations=table)


def test_an_unknown_path_is_404_and_a_wrong_method_405(client):
    assert _error(client.get("/no/such/thing"), 404)["operation"] is None
    response = client.put("/topics")
    _error(response, 405)
    assert set(response.headers["allow"].split(", ")) == {"GET", "POST"}
    _error(client.post("/openapi.json"), 405)


def test_paths_that_are_not_utf8_once_decoded_are_400(client):
    assert "UTF-8" in _error(client.get("/faults/%ff"), 400)["message"]
    assert _error(client.get("/%C3%A9"), 404)  # decodes fine (é); no such operation


def test_malformed_bodies_are_400_and_change_nothing(client):
    before = digest(client)
    json_type = {"content-type": "application/json"}
    for content in [b"{not json", b"[1, 2]", b"\xff\xfe", b'"a string"']:
        error = _error(client.post("/topics", content=content, headers=json_type), 400)
        assert error["operation"] == "create_topic"
    _error(client.post("/topics?name=x", json={}), 400)  # POST reads a body, not the query
    _error(client.request("GET", "/topics", content=b'{"a": 1}', headers=json_type), 400)
    _error(client.post("/topics", content=b" " * (1 << 20) + b"{}", headers=json_type), 413)
    assert digest(client) == before


def test_a_literal_segment_wins_over_a_placeholder_whatever_the_order():
    table = {"one": Operation("one", "GET", "/x/{one}", _OneTwo, _echo_one, "one"),
             "fixed": Operation("fixed", "GET", "/x/fixed", NoParams, lambda b, p: "literal", "f")}
    with endpoint_for(table) as (url, _, errors):
        assert httpx.get(f"{url}/x/fixed", headers=AUTH).json() == {"result": "literal"}
        assert httpx.get(f"{url}/x/other", headers=AUTH).json() == {"result": "other"}
    assert errors == []


def _echo_one(broker, params):
    return params.one


def test_a_path_value_and_a_different_body_value_are_refused(emu):
    table = {"echo": Operation("echo", "POST", "/echo/{name}", _Named, _echo, "echo")}
    with endpoint_for(table) as (url, _, _errors):
        assert httpx.post(f"{url}/echo/a%2Fb", json={"name": "a/b"},
                          headers=AUTH).json() == {"result": "a/b"}
        _error(httpx.post(f"{url}/echo/a", json={"name": "b"}, headers=AUTH), 400)


@attrs.frozen(kw_only=True)
class _Named:
    name: str


@attrs.frozen(kw_only=True)
class _OneTwo:
    one: str = ""
    two: str = ""


def _echo(broker, params):
    return params.name


def test_operations_run_on_the_emulators_thread_and_may_be_async():
    seen = {}

    def where(broker, params):
        seen["sync"] = threading.current_thread()
        return broker.now_ms() >= 0

    async def waits(broker, params):
        await trio.sleep(0.01)
        seen["async"] = threading.current_thread()
        return {"slept": True}

    table = {"where": Operation("where", "GET", "/where", NoParams, where, "where"),
             "waits": Operation("waits", "POST", "/waits", NoParams, waits, "waits")}
    with endpoint_for(table) as (url, broker, errors):
        assert httpx.get(f"{url}/where", headers=AUTH).json() == {"result": True}
        assert httpx.post(f"{url}/waits", headers=AUTH).json() == {"result": {"slept": True}}
    assert seen["sync"] is seen["async"] and seen["sync"] is not threading.main_thread()
    assert errors == []


def test_an_unexpected_exception_is_500_json_and_recorded_as_the_brokers_error():
    def broken(broker, params):
        raise KeyError("a bug")

    def refuses(broker, params):
        raise ControlError("no such member 'm'", 404)

    table = {"broken": Operation("broken", "POST", "/broken", NoParams, broken, "broken"),
             "refuses": Operation("refuses", "POST", "/refuses", NoParams, refuses, "refuses")}
    with endpoint_for(table) as (url, _, errors):
        error = _error(httpx.post(f"{url}/broken", headers=AUTH), 500)
        assert error["operation"] == "broken" and "a bug" in error["message"]
        assert _error(httpx.post(f"{url}/refuses", headers=AUTH),
                      404)["message"] == "no such member 'm'"
        assert httpx.get(f"{url}/health").status_code == 200  # the endpoint lives on
    assert [type(e) for e in errors] == [KeyError]


def test_the_endpoint_stops_with_the_emulator():
    with run_in_thread(control_port=0) as emulator:
        url = emulator.control_url
        assert httpx.get(f"{url}/health").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/health", timeout=5)


# -- every registered operation, generically --------------------------------------------------

def _value_for(op: Operation):
    hints = _hints(op.params)

    def value(name: str):
        schema = json_schema(hints[name])
        return 1 if schema.get("type") == "integer" else "no-such-thing"
    return value


def _send(client: httpx.Client, op: Operation, params: dict) -> httpx.Response:
    path = dummy_path(op, _value_for(op))
    if op.method == "GET":
        return client.get(path, params=params)
    return client.request(op.method, path, json=params)


def _valid_value(schema: dict):
    """Some value of the type ``schema`` names (not necessarily one the operation accepts)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kinds = schema.get("type")
    kind = (kinds[0] if isinstance(kinds, list) else kinds) or "string"
    return {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {},
            "null": None}.get(kind, "x")


def _wrong_value(schema: dict):
    """A JSON value ``schema`` refuses, or None when it takes anything."""
    kinds = schema.get("type")
    kinds = set(kinds if isinstance(kinds, list) else [kinds] if kinds else [])
    if "enum" in schema:
        return "not-one-of-them"
    if not kinds or "string" in kinds:
        return {"an": "object"} if "object" not in kinds and kinds else None
    if kinds & {"integer", "number", "boolean", "array", "object"}:
        return "not-a-number" if kinds & {"integer", "number"} else {"an": "object"}
    return None


@pytest.mark.parametrize("name", sorted(all_operations()))
def test_bad_input_to_every_operation_is_a_4xx_json_error_that_changes_nothing(client, name):
    op = all_operations()[name]
    before = digest(client)
    error = _error(_send(client, op, {"no_such_parameter": 1}), 400)
    assert "no_such_parameter" in error["message"] and error["operation"] == name

    hints = _hints(op.params)
    for placeholder in path_params(op):  # a path value of the wrong type
        if json_schema(hints[placeholder]).get("type") == "integer":
            path = op.path.replace("{" + placeholder + "}", "not-a-number")
            path = dummy_path(attrs.evolve(op, path=path), _value_for(op))
            assert client.request(op.method, path).status_code == 400, (name, path)

    in_path = set(path_params(op))
    for field in attrs.fields(op.params):
        if field.name in in_path:
            continue
        if field.default is attrs.NOTHING:  # leave out one required parameter
            required = {f.name: _valid_value(json_schema(hints[f.name]))
                        for f in attrs.fields(op.params)
                        if f.default is attrs.NOTHING and f.name not in in_path}
            del required[field.name]
            assert field.name in _error(_send(client, op, required), 400)["message"]
        wrong = _wrong_value(json_schema(hints[field.name]))
        if wrong is None or op.method == "GET" and isinstance(wrong, dict):
            continue  # a query string cannot carry an object
        response = _send(client, op, {field.name: wrong})
        assert 400 <= response.status_code < 500, (name, field.name, response.text)
        _error(response, response.status_code)
    assert digest(client) == before, name


# -- the cluster operations -------------------------------------------------------------------

def test_topics_listed_and_created_with_409_and_400_for_bad_requests(client):
    assert [t["name"] for t in client.get("/topics").json()["result"]] == ["orders"]
    created = client.post("/topics", json={"name": "payments", "partitions": 2}).json()["result"]
    assert created["name"] == "payments" and created["partitions"] == 2
    assert _error(client.post("/topics", json={"name": "payments", "partitions": 2}), 409)
    assert "partitions" in _error(client.post("/topics", json={"name": "x", "partitions": 0}),
                                  400)["message"]
    assert _error(client.post("/topics", json={"name": "bad name!"}), 400)
    assert _error(client.post("/topics", json={"partitions": 1}), 400)["message"] == \
        "create_topic needs name"
    listed = {t["name"]: t["partitions"] for t in client.get("/topics").json()["result"]}
    assert listed == {"orders": 3, "payments": 2}


# -- the issue's list of bad input, over HTTP ---------------------------------------------------

@pytest.mark.parametrize("method, path, body, status, words", [
    ("POST", "/faults", {"action": "error", "api": "NoSuchApi", "error": "NOT_COORDINATOR"},
     400, "NoSuchApi"),
    ("POST", "/faults", {"action": "error", "api": "Heartbeat", "error": "NO_SUCH_ERROR"},
     400, "NO_SUCH_ERROR"),
    ("POST", "/faults", {"action": "delay", "api": "Heartbeat", "delay_ms": -5}, 400, "delay_ms"),
    ("DELETE", "/faults/999", None, 404, "999"),
    ("POST", "/groups/no-such-group/expire-member", {"member_id": "m"}, 404, "no-such-group"),
    ("POST", "/groups/known/expire-member", {"member_id": "no-such-member"}, 404,
     "no-such-member"),
    ("POST", "/time/advance", {"ms": -1}, 400, "ms"),
    ("POST", "/time/advance-to-next-deadline", {"kind": "no-such-kind"}, 400, "no-such-kind"),
])
def test_bad_input_named_by_the_issue_is_refused_over_http(client, method, path, body, status,
                                                             words):
    # a group that exists (Empty, with a committed offset) for the unknown-member case
    setup = client.post("/groups/known/offsets", json={"offsets": ["orders:0=5"]})
    assert setup.status_code == 200, setup.text
    before = digest(client)
    error = _error(client.request(method, path, json=body), status)
    assert words in error["message"], error
    assert digest(client) == before


def test_a_waiting_operation_answers_once_a_real_consumer_makes_the_group_stable(emu, client):
    """GET /groups/{id}/wait (an async operation of the table) parks the HTTP request on the
    emulator's loop while kafka-python joins over its own connection; 408 after its timeout."""
    from concurrent.futures import ThreadPoolExecutor

    from kafka import KafkaConsumer

    assert _error(client.get("/groups/g-wait/wait", params={"timeout": 0.2}), 408)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.get, "/groups/g-wait/wait",
                              params={"state": "Stable", "members": 1, "timeout": 30})
        consumer = KafkaConsumer(bootstrap_servers=emu.bootstrap_servers, group_id="g-wait",
                                 session_timeout_ms=6000, heartbeat_interval_ms=500)
        try:
            consumer.subscribe(["orders"])
            while not waiting.done():
                consumer.poll(timeout_ms=100)
            answer = waiting.result()
        finally:
            consumer.close()
    assert answer.status_code == 200, answer.text
    view = answer.json()["result"]
    assert view["state"] == "Stable" and len(view["members"]) == 1


async def test_open_emulator_serves_the_endpoint_in_the_callers_trio_loop():
    from kafka_emu.testing.emulator import open_emulator

    async with open_emulator(make_config(topics=TOPICS), control_port=0) as emulator:
        async with httpx.AsyncClient(base_url=emulator.control_url,
                                     headers={"Authorization":
                                              f"Bearer {emulator.control_token}"}) as http:
            answer = await http.get("/topics")
    assert [t["name"] for t in answer.json()["result"]] == ["orders"]
