"""Per-topic log settings, parsed from the string configs of CreateTopics.

Theory of operation
-------------------
Kafka keeps a topic's overrides as strings and checks each against LogConfig's definitions. We
keep the raw overrides beside the topic (the broker echoes them in DescribeConfigs and the
CreateTopics response) and parse only the few that change data-path behaviour into a frozen
``LogConfig``:

* ``retention.ms`` (long >= -1, -1 = forever) and ``retention.bytes`` (long, negative =
  unbounded): enforced by the broker's retention check every log.retention.check.interval.ms
  (``PartitionLog.delete_old_batches``), dropping whole oldest batches (Kafka drops whole
  segments; a batch is our segment).
* ``max.message.bytes`` (int >= 0): the largest batch a producer may append.
* ``message.timestamp.type`` (CreateTime | LogAppendTime).
* ``cleanup.policy`` (list of delete/compact): DeleteRecords and retention need ``delete``.
  Compaction itself is not emulated.

Every other name Kafka defines for topics is accepted and stored unparsed (compression.type, segment.bytes, ...). An unknown name, a null value or a value that does not
parse is INVALID_CONFIG, as Kafka's controller answers (LogConfig.validateNames, "Null value not
supported for topic configs").
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.batch import DEFAULT_MAX_MESSAGE_BYTES, TimestampType

# TopicConfig + LogConfig topic-level names, Kafka 4.0.
TOPIC_CONFIG_NAMES = frozenset(
    {
        "cleanup.policy",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
)

_INT32_MAX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_TIMESTAMP_TYPES = {"CreateTime": TimestampType.CREATE_TIME, "LogAppendTime": TimestampType.LOG_APPEND_TIME}


@attrs.frozen(kw_only=True)
class LogConfig:
    retention_bytes: int = -1
    retention_ms: int = 7 * 24 * 3600 * 1000  # Kafka's default (log.retention.hours=168)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    cleanup_policy: frozenset[str] = frozenset({"delete"})

    @property
    def compacts(self) -> bool:
        """Whether the topic is compacted (Kafka's LogConfig.compact): keyless records are refused."""
        return "compact" in self.cleanup_policy

    @property
    def deletes(self) -> bool:
        """Whether records may be removed by retention or DeleteRecords."""
        return "delete" in self.cleanup_policy

    def with_overrides(self, configs: Mapping[str, str | None]) -> LogConfig:
        """This config with topic-level string overrides applied (INVALID_CONFIG on bad input)."""
        changes: dict[str, object] = {}
        for name, value in configs.items():
            if name not in TOPIC_CONFIG_NAMES:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
            if value is None:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {name}"
                )
            if name == "retention.bytes":
                changes["retention_bytes"] = _parse_int(name, value, _INT64_MIN, _INT64_MAX)
            elif name == "retention.ms":
                changes["retention_ms"] = _parse_int(name, value, -1, _INT64_MAX)
            elif name == "max.message.bytes":
                changes["max_message_bytes"] = _parse_int(name, value, 0, _INT32_MAX)
            elif name == "message.timestamp.type":
                if value not in _TIMESTAMP_TYPES:
                    raise _invalid(name, value, "String must be one of: CreateTime, LogAppendTime")
                changes["timestamp_type"] = _TIMESTAMP_TYPES[value]
            elif name == "cleanup.policy":
                policies = frozenset(p.strip() for p in value.split(",") if p.strip())
                if not policies <= {"delete", "compact"}:
                    raise _invalid(name, value, "Invalid value for cleanup.policy")
                changes["cleanup_policy"] = policies
        return attrs.evolve(self, **changes) if changes else self


def _parse_int(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise _invalid(name, value, "Not a number") from None
    if not low <= number <= high:
        raise _invalid(name, value, f"Value must be in [{low}, {high}]")
    return number


def _invalid(name: str, value: str, why: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: {why}")
