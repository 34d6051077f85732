"""The trace schema: every event kind survives to_record -> JSON -> the committed JSON Schema,
the committed file is what the declaration generates, and consumer-protocol bytes decode."""

from __future__ import annotations

import enum
import json
import sys
import typing
from collections.abc import Hashable

import attrs
import jsonschema
import pytest

from kafka_emu.protocol.messages import consumer_protocol as cp
from kafka_emu.trace import schema

SUBSCRIPTION = cp.encode_subscription(cp.ConsumerProtocolSubscription(
    topics=["orders", "payments"], user_data=None,
    owned_partitions=[cp.TopicPartition(topic="orders", partitions=[0, 2])]), 1)
ASSIGNMENT = cp.encode_assignment(cp.ConsumerProtocolAssignment(
    assigned_partitions=[cp.TopicPartition(topic="orders", partitions=[1, 3])], user_data=None), 0)


def _nested(tp):
    """A value of a nested tuple type such as tuple[str, tuple[int, ...]]: strings "t", ints 3."""
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return (_nested(args[0]),)
        return tuple(_nested(a) for a in args)
    return "t" if tp is str else 3


def _plain(value):
    """JSON-read records and event tuples compared alike: dicts by their values, lists as tuples."""
    if isinstance(value, dict):
        return tuple(_plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _sample(tp, name):
    """A value for one annotated field: distinct enough that a lost field would show."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return _sample([a for a in args if a is not type(None)][0], name)
    if origin is tuple:
        inner = args[0]
        if typing.get_origin(inner) is tuple:  # tuples of tuples: (topic, partition[, n])
            return (_nested(inner),)
        if inner is str and name == "members":
            return ("m-1", "m-2")
        return (_sample(inner, name),)
    if tp is bytes:
        return SUBSCRIPTION if name == "metadata" else ASSIGNMENT
    if tp is bool:
        return True
    if tp is int or tp is Hashable or tp is typing.Hashable:
        return 7
    if tp is float:
        return 1.5
    if tp is str:
        return f"{name}-value"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return list(tp)[-1]
    raise AssertionError(f"no sample for {tp!r} ({name})")


def _event(cls):
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    values = {f.name: _sample(hints[f.name], f.name) for f in attrs.fields(cls)}
    if "assignments" in values:
        values["assignments"] = (("m-1", ASSIGNMENT), ("m-2", b"\x00"))  # one does not parse
    if "protocol_type" in values:
        values["protocol_type"] = "consumer"
    return cls(**values)


VALIDATOR = jsonschema.Draft202012Validator(json.loads(schema.SCHEMA_FILE.read_text()))


def test_committed_json_schema_is_generated_from_the_declaration():
    assert schema.SCHEMA_FILE.read_text() == schema.render_json_schema(), (
        "kafka_emu/trace/trace-schema.json is stale: run `python -m kafka_emu.trace`")


def test_every_kind_of_the_union_has_one_type_per_field():
    names = [name for name, _ in schema.columns()]
    assert len(names) == len(set(names))
    assert {"kind", "run", "seq", "at_ms", "api", "error_code", "assignments"} <= set(names)


@pytest.mark.parametrize("cls", schema.event_classes(), ids=lambda c: c.__name__)
def test_every_event_kind_round_trips_through_the_schema(cls):
    event = _event(cls)
    record = schema.to_record(event) | {"run": "r-1", "seq": 5}
    back = json.loads(json.dumps(record))
    VALIDATOR.validate(back)
    assert back["kind"] == schema.KINDS[back["kind"]].name
    assert schema.KINDS[back["kind"]].event_class is cls
    for f in attrs.fields(cls):
        value, written = getattr(event, f.name), back[f.name]
        if isinstance(value, enum.Enum):
            assert written == value.value
        elif isinstance(value, (str, int, float)) and not isinstance(value, enum.Enum):
            assert written == value, f.name
        elif isinstance(value, tuple) and value and isinstance(value[0], tuple) \
                and f.name != "assignments":
            assert [_plain(d) for d in written] == [_plain(v) for v in value]
        elif isinstance(value, tuple):
            assert len(written) == len(value)


def test_consumer_protocol_bytes_are_decoded_into_topics_and_partitions():
    sub = next(c for c in schema.event_classes() if c.__name__ == "MemberSubscribed")
    record = schema.to_record(_event(sub))
    assert record["metadata"]["topics"] == ["orders", "payments"]
    assert record["metadata"]["owned_partitions"] == [{"topic": "orders", "partitions": [0, 2]}]
    assert record["metadata"]["raw"] is None
    dist = next(c for c in schema.event_classes() if c.__name__ == "AssignmentsDistributed")
    record = schema.to_record(_event(dist))
    good, bad = record["assignments"]
    assert good == {"member_id": "m-1", "raw": None,
                    "topics": [{"topic": "orders", "partitions": [1, 3]}]}
    assert bad["topics"] is None and bad["raw"] == "AA=="  # kept, base64, when it does not parse


def test_other_protocol_types_keep_their_bytes_as_base64():
    assert schema.decode_subscription("connect", b"\x01\x02") == {
        "topics": None, "owned_partitions": None, "rack_id": None, "raw": "AQI="}


@pytest.mark.parametrize("kind", ["run_start", "run_end", "topics_known", "scenario_verdict"])
def test_extra_kinds_validate(kind):
    samples = {
        "run_start": {"schema_version": 1, "emu_version": "0.1.0", "config": {"a": "b"},
                      "labels": {"client": "aiokafka"}, "host": "127.0.0.1", "port": 9092,
                      "broker_api_versions": {"JoinGroup": 9}},
        "run_end": {"events": 10, "written": 9, "dropped": 1, "dropped_disk": 1,
                    "write_failures": 1, "reason": "stopped"},
        "topics_known": {"topic_partitions": [{"topic": "orders", "count": 4}]},
        "scenario_verdict": {"scenario": "static-rejoin", "client": "aiokafka",
                             "client_version": "0.12.0", "verdict": "pass", "reason": "", "seconds": 2.5},
    }
    VALIDATOR.validate({"kind": kind, "run": "r", "seq": 0, "at_ms": 1} | samples[kind])
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({"kind": kind, "run": "r", "seq": 0, "at_ms": 1})  # fields missing
