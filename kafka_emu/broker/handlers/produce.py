"""Produce v3-12: magic-2 batches only (v3+); acks 0 gets no response, 1 and -1 are the same
on a single in-memory replica; anything else is INVALID_REQUIRED_ACKS. Each partition's blob is
validated and appended by the pure log (offsets assigned, CRC checked, idempotent sequence
numbers enforced). Topics missing here are auto-created when auto.create.topics.enable is on.
Internal topics (``__consumer_offsets``) refuse client writes with INVALID_TOPIC_EXCEPTION and are
never auto-created here; in a cluster a partition this broker does not lead is
NOT_LEADER_OR_FOLLOWER. Keyless records on a compacted topic are INVALID_RECORD with, from v8,
one record error each and Kafka's summary message (KIP-467). Transactional produce is out of scope: its batches get INVALID_TXN_STATE from the log.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...log.batch import Compression, parse_header
from ...log.catalogue import INTERNAL_TOPICS
from ...log.records import KeylessRecords
from ...protocol.messages.produce import (API, BatchIndexAndErrorMessage, PartitionProduceResponse,
                                          ProduceResponse, TopicProduceResponse)
from . import Handler

VALID_ACKS = (0, 1, -1)


def has_error_messages(version: int) -> bool:
    return version >= 8


def allows_zstd(version: int) -> bool:
    return version >= 7  # KIP-110: older requests cannot carry zstd batches


def _check_codec(records: bytes | None, version: int) -> None:
    if not allows_zstd(version) and records and len(records) >= 61 \
            and parse_header(records).compression == Compression.ZSTD:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)


def _failed(topic: str, index: int, exc: KafkaError, version: int) -> PartitionProduceResponse:
    message, record_errors = exc.message, []
    if isinstance(exc, KeylessRecords):  # v8+ name each refused record (KIP-467)
        message, errors = exc.describe(topic, index)
        record_errors = [BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=m)
                         for i, m in errors]
    if not has_error_messages(version):
        message, record_errors = None, []
    return PartitionProduceResponse(
        index=index, error_code=exc.code, base_offset=-1, log_start_offset=-1,
        record_errors=record_errors, error_message=message)


async def produce(ctx, request) -> ProduceResponse | None:
    topics = ctx.broker.topics
    cluster = ctx.broker.cluster
    node_id = ctx.connection.node_id
    now = ctx.now_ms()
    responses = []
    appended = False
    for t in request.topic_data:
        parts = []
        internal = t.name in INTERNAL_TOPICS
        if request.acks in VALID_ACKS and not internal and topics.lookup(t.name) is None \
                and ctx.broker.config.auto_create_topics_enable:
            try:
                topics.auto_create(t.name)
            except KafkaError:
                pass  # an invalid name: each partition reports UNKNOWN_TOPIC_OR_PARTITION
        for p in t.partition_data:
            try:
                if request.acks not in VALID_ACKS:
                    raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS)
                log = topics.partition(t.name, p.index)
                if internal:  # ReplicaManager: clients may not write internal topics
                    raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                                     f"Cannot append to internal topic {t.name}")
                if cluster.multi:
                    refused = cluster.check_partition(node_id, t.name, p.index)
                    if refused is not None:
                        raise KafkaError(refused)
                _check_codec(p.records, ctx.version)
                result = log.append(p.records, now)
            except KafkaError as exc:
                parts.append(_failed(t.name, p.index, exc, ctx.version))
                continue
            appended = appended or not result.duplicate
            parts.append(PartitionProduceResponse(
                index=p.index, error_code=ErrorCode.NONE, base_offset=result.base_offset,
                log_append_time_ms=result.log_append_time_ms,
                log_start_offset=result.log_start_offset))
        responses.append(TopicProduceResponse(name=t.name, partition_responses=parts))
    if appended:
        topics.notify_append()
    if request.acks == 0:
        return None  # Kafka sends nothing back for acks=0
    return ProduceResponse(responses=responses)


HANDLER = Handler(API, "3-12", produce)
