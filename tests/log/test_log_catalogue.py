"""Topic catalogue: creation rules and errors, lookups, deletion, ids, configs; and purity."""

from __future__ import annotations

import itertools
import subprocess
import sys
import uuid

import pytest
from log_testing import make_batch, raises_code

from kafka_emu.errors import ErrorCode
from kafka_emu.log.batch import TimestampType
from kafka_emu.log.catalogue import TopicCatalogue, topic_name_error, validate_topic_name


def counting_ids():
    counter = itertools.count(100)
    return lambda: uuid.UUID(int=next(counter))


def test_create_and_look_up():
    cat = TopicCatalogue(uuid_factory=counting_ids())
    topic = cat.create_topic("orders", 3)
    assert topic.num_partitions == 3 and topic.topic_id == uuid.UUID(int=100)
    assert cat.topic("orders") is topic and cat.get("orders") is topic
    assert cat.get_by_id(topic.topic_id) is topic and cat.topic_by_id(topic.topic_id) is topic
    assert cat.partition("orders", 2) is topic.partitions[2]
    assert cat.partition_by_id(topic.topic_id, 0) is topic.partitions[0]
    assert "orders" in cat and len(cat) == 1 and list(cat) == [topic]
    assert cat.get("nope") is None and cat.get_by_id(uuid.uuid4()) is None


def test_partitions_are_independent_logs():
    cat = TopicCatalogue()
    cat.create_topic("t", 2)
    cat.partition("t", 0).append(make_batch(2), now_ms=0)
    assert cat.partition("t", 0).high_watermark == 2
    assert cat.partition("t", 1).high_watermark == 0


def test_unknown_topic_or_partition():
    cat = TopicCatalogue()
    cat.create_topic("t", 2)
    for name, index in (("t", 2), ("t", -1), ("missing", 0)):
        with raises_code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
            cat.partition(name, index)
    with raises_code(ErrorCode.UNKNOWN_TOPIC_ID):
        cat.partition_by_id(uuid.uuid4(), 0)


def test_topic_already_exists():
    cat = TopicCatalogue()
    cat.create_topic("t", 1)
    with raises_code(ErrorCode.TOPIC_ALREADY_EXISTS):
        cat.create_topic("t", 1)


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "with space", "slash/y", "é", "a\n"])
def test_invalid_topic_names(name):
    assert topic_name_error(name) is not None
    with raises_code(ErrorCode.INVALID_TOPIC_EXCEPTION):
        TopicCatalogue().create_topic(name, 1)


@pytest.mark.parametrize("name", ["a", "a" * 249, "A-z_0.9", "__consumer_offsets", "...", "_"])
def test_valid_topic_names(name):
    validate_topic_name(name)
    assert TopicCatalogue().create_topic(name, 1).name == name


def test_internal_topics_are_flagged():
    cat = TopicCatalogue()
    assert cat.create_topic("__consumer_offsets", 50).is_internal
    assert not cat.create_topic("__mine", 1).is_internal


def test_names_colliding_on_dot_and_underscore_are_invalid():
    cat = TopicCatalogue()
    cat.create_topic("a.b", 1)
    with raises_code(ErrorCode.INVALID_TOPIC_EXCEPTION) as info:
        cat.create_topic("a_b", 1)
    assert "collides" in str(info.value)
    cat.delete_topic("a.b")
    cat.create_topic("a_b", 1)


def test_partition_counts():
    cat = TopicCatalogue(default_num_partitions=4)
    assert cat.create_topic("d", -1).num_partitions == 4
    assert cat.create_topic("d2").num_partitions == 4
    for bad in (0, -2):
        with raises_code(ErrorCode.INVALID_PARTITIONS):
            cat.create_topic("x", bad)
    with raises_code(ErrorCode.POLICY_VIOLATION):
        cat.create_topic("huge", 10_000)
    assert cat.create_topic("big", 9_999).num_partitions == 9_999


def test_validate_only_registers_nothing():
    cat = TopicCatalogue()
    topic = cat.create_topic("t", 3, validate_only=True)
    assert topic.num_partitions == 3 and "t" not in cat and cat.version == 0
    with raises_code(ErrorCode.INVALID_PARTITIONS):
        cat.create_topic("t", 0, validate_only=True)


def test_delete_topic():
    cat = TopicCatalogue()
    first = cat.create_topic("t", 1)
    cat.partition("t", 0).append(make_batch(1), now_ms=0)
    assert cat.delete_topic("t") is first
    assert "t" not in cat and cat.get_by_id(first.topic_id) is None
    with raises_code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
        cat.delete_topic("t")
    again = cat.create_topic("t", 1)
    assert again.topic_id != first.topic_id and again.partitions[0].high_watermark == 0
    assert cat.delete_topic_by_id(again.topic_id) is again
    with raises_code(ErrorCode.UNKNOWN_TOPIC_ID):
        cat.delete_topic_by_id(again.topic_id)


def test_version_counts_changes():
    cat = TopicCatalogue()
    cat.create_topic("a", 1)
    cat.create_topic("b", 1)
    cat.delete_topic("a")
    cat.ensure_topic("b")
    assert cat.version == 3


def test_ensure_topic_auto_creates_once():
    cat = TopicCatalogue(default_num_partitions=2)
    topic = cat.ensure_topic("auto")
    assert topic.num_partitions == 2 and cat.ensure_topic("auto", 5) is topic
    with raises_code(ErrorCode.INVALID_TOPIC_EXCEPTION):
        cat.ensure_topic("bad name")


def test_reserved_and_dash_leading_ids_are_redrawn():
    dash = uuid.UUID(bytes=b"\xf8" + bytes(15))  # base64url "-A..."
    ids = iter([uuid.UUID(int=0), uuid.UUID(int=1), dash, uuid.UUID(int=5), uuid.UUID(int=5), uuid.UUID(int=6)])
    cat = TopicCatalogue(uuid_factory=lambda: next(ids))
    assert cat.create_topic("a", 1).topic_id == uuid.UUID(int=5)
    assert cat.create_topic("b", 1).topic_id == uuid.UUID(int=6)  # 5 is taken


def test_random_ids_by_default():
    cat = TopicCatalogue()
    assert cat.create_topic("a", 1).topic_id != cat.create_topic("b", 1).topic_id


def test_topic_configs():
    cat = TopicCatalogue()
    topic = cat.create_topic(
        "t",
        1,
        configs={
            "retention.bytes": "1000",
            "max.message.bytes": "5000",
            "message.timestamp.type": "LogAppendTime",
            "cleanup.policy": "compact,delete",
            "retention.ms": "60000",
        },
    )
    assert topic.config.retention_bytes == 1000 and topic.config.max_message_bytes == 5000
    assert topic.config.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert topic.config.cleanup_policy == {"compact", "delete"}
    assert topic.partitions[0].config is topic.config
    assert topic.configs["retention.ms"] == "60000"


@pytest.mark.parametrize(
    "configs",
    [
        {"no.such.config": "1"},
        {"retention.bytes": None},
        {"retention.bytes": "lots"},
        {"max.message.bytes": "-1"},
        {"message.timestamp.type": "WallClock"},
        {"cleanup.policy": "shred"},
    ],
)
def test_bad_topic_configs_are_invalid_config(configs):
    cat = TopicCatalogue()
    with raises_code(ErrorCode.INVALID_CONFIG):
        cat.create_topic("t", 1, configs=configs)
    assert "t" not in cat


def test_importing_the_log_package_does_not_import_trio():
    code = "import sys, kafka_emu.log; print('trio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
