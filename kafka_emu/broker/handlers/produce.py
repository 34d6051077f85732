"""Produce v3-13: magic-2 batches only (v3+); acks 0 gets no response, 1 and -1 are the same
on a single in-memory replica; anything else is INVALID_REQUIRED_ACKS. Each partition's blob is
validated and appended by the pure log (offsets assigned, CRC checked, idempotent sequence
numbers enforced). Topics missing here are auto-created when auto.create.topics.enable is on.
Internal topics (``__consumer_offsets``) refuse client writes with INVALID_TOPIC_EXCEPTION and are
never auto-created here; in a cluster a partition this broker does not lead is
NOT_LEADER_OR_FOLLOWER. Keyless records on a compacted topic are INVALID_RECORD with, from v8,
one record error each and Kafka's summary message (KIP-467). v13 names topics by id (KIP-516):
an id no topic has is UNKNOWN_TOPIC_ID for each of its partitions, and nothing is auto-created
(there is no name to create), as KafkaApis.handleProduceRequest.

Transactional batches (KafkaApis.handleProduceRequest, ReplicaManager.appendRecords): without a
transactional id the whole request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED. With
transaction.partition.verification.enable (default true) a transactional batch for a partition
where its producer has no transaction open at that epoch is first checked with the transaction
coordinator (KIP-890 part 1; v12+ adds the partition as transactions v2 do, KIP-890 part 2,
and then a producer the partition has no state for must start at sequence 0);
its answer becomes the partition's error as ReplicaManager words it: PRODUCER_FENCED is
INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE is INVALID_TXN_STATE below v11, and the
retriable coordinator errors (CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_AVAILABLE, ...) are
NOT_ENOUGH_REPLICAS, which old clients retry. The log then checks epochs, sequences and
transaction state (log/producers.py).
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...log.batch import NO_TIMESTAMP, TRANSACTIONAL_MASK, Compression, parse_header
from ...log.catalogue import INTERNAL_TOPICS
from ...log.records import KeylessRecords
from ...frozen import mutable_twin
from ...protocol.codegen import shared_default
from ...protocol.produce_scan import UndecodedTopics
from ...protocol.messages.produce import (API, BatchIndexAndErrorMessage, LeaderIdAndEpoch,
                                          PartitionProduceResponse, ProduceResponse,
                                          TopicProduceResponse)
from . import Handler
from .produce_fast import NOT_TAKEN
from .produce_fast import answer as fast_answer
from .produce_fast import produce_response

VALID_ACKS = (0, 1, -1)
# the tagged current leader (v10+) a successful append never names, shared (frozen) rather than
# built for every partition of every answer by the struct default's factory; the writer's own
# default, which it recognises by identity
_NO_CURRENT_LEADER = shared_default(LeaderIdAndEpoch)
# a successful partition's answer is built in the mutable twin (plain slot stores, then its real
# class): one per partition of every Produce, at a sixth of the keyword __init__'s cost
_Building = mutable_twin(PartitionProduceResponse)
# and, once per request, its topic's answer the same way (the response: produce_fast.py)
_BuildingTopic = mutable_twin(TopicProduceResponse)


def _topic_answer(name: str, topic_id, parts: list) -> TopicProduceResponse:
    if _BuildingTopic is None:
        return TopicProduceResponse(name=name, topic_id=topic_id, partition_responses=parts)
    answer = _BuildingTopic()
    answer.name = name
    answer.topic_id = topic_id
    answer.partition_responses = parts
    answer.__class__ = TopicProduceResponse
    return answer


def _succeeded(index: int, base_offset: int, log_append_time_ms: int,
               log_start_offset: int) -> PartitionProduceResponse:
    """A successful partition's answer by its class (the handler builds it in ``_Building``
    itself; this is for when the class grew something mutable_twin cannot reproduce)."""
    return PartitionProduceResponse(
        index=index, error_code=ErrorCode.NONE, base_offset=base_offset,
        log_append_time_ms=log_append_time_ms, log_start_offset=log_start_offset,
        current_leader=_NO_CURRENT_LEADER)


def uses_topic_ids(version: int) -> bool:
    return version >= 13


def has_error_messages(version: int) -> bool:
    return version >= 8


def allows_zstd(version: int) -> bool:
    return version >= 7  # KIP-110: older requests cannot carry zstd batches


def _check_codec(records: bytes | None, version: int) -> None:
    if not allows_zstd(version) and records and len(records) >= 61 \
            and parse_header(records).compression == Compression.ZSTD:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)


def answers_transaction_abortable(version: int) -> bool:
    return version >= 11  # AddPartitionsToTxnManager: genericErrorSupported from v11


def adds_partition_to_transaction(version: int) -> bool:
    return version >= 12  # transactions v2 (KIP-890 part 2): the produce adds the partition


# ReplicaManager's postVerificationCallback: retriable coordinator errors old clients mishandle
_RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({
    ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR})


def _transactional(records) -> tuple[int, int, int] | None:
    """(producer id, epoch, base sequence) of a transactional batch, else None (header only)."""
    # the attributes' low byte (offset 22) first: most batches are not transactional
    if not records or len(records) < 61 or not records[22] & TRANSACTIONAL_MASK:
        return None
    header = parse_header(records)
    if header.producer_id < 0:
        return None
    return header.producer_id, header.producer_epoch, header.base_sequence


def _verify(ctx, transactional_id: str, topic: str, index: int, log, producer) -> None:
    """KIP-890 verification of one partition; raises the error Produce answers."""
    if producer is None or log.has_ongoing_transaction(producer[0], producer[1]):
        return
    broker = ctx.broker
    if not getattr(broker.config, "transaction_partition_verification_enable", True):
        return
    transactions = getattr(broker, "transactions", None)
    add = (getattr(transactions, "add_partition_implicitly", None)
           if adds_partition_to_transaction(ctx.version) else None)
    if add is not None:  # now_ms: the transaction may start here (its timeout counts from it)
        error = ErrorCode(add(transactional_id, producer[0], producer[1], topic, index,
                              now_ms=ctx.now_ms()))
    else:
        verify = getattr(transactions, "verify_partition", None)
        if verify is None:
            return
        error = ErrorCode(verify(transactional_id, producer[0], producer[1], topic, index))
    if error == ErrorCode.NONE:
        if add is not None and producer[2] != 0 and log.producers.entry(producer[0]) is None:
            # ProducerAppendInfo.checkSequence: a transactions-v2 producer the partition has no
            # state for must start at sequence 0
            raise KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                             f"Invalid sequence number for producer {producer[0]}: "
                             f"{producer[2]} (incoming seq. number). Expected sequence 0 for "
                             "transactions v2 idempotent producer with no existing state.")
        return
    if error == ErrorCode.PRODUCER_FENCED:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    elif error == ErrorCode.TRANSACTION_ABORTABLE and not answers_transaction_abortable(ctx.version):
        error = ErrorCode.INVALID_TXN_STATE
    if error == ErrorCode.INVALID_TXN_STATE:
        raise KafkaError(error, "Partition was not added to the transaction")
    if error in _RETRY_AS_NOT_ENOUGH_REPLICAS:
        raise KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been "
                         f"added to the transaction. Underlying error: {error.name}")
    raise KafkaError(error)


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
    topic_data = request.topic_data
    if topic_data.__class__ is UndecodedTopics:  # a v9+ request of the usual shape
        answered = fast_answer(ctx, request, topic_data)  # (produce_fast.py)
        if answered is not NOT_TAKEN:
            return answered
        # the generic path, and whoever reads the request after it, read the declared list
        object.__setattr__(request, "topic_data", topic_data.elements())
    broker = ctx.broker
    topics = broker.topics
    catalogue = topics.catalogue
    cluster = broker.cluster
    multi = cluster.multi
    node_id = ctx.connection.node_id
    now = None  # read from the clock only for a LogAppendTime topic, the one use the log has
    version = ctx.version
    responses = []
    appended = []  # the logs written: their waiting fetches are woken
    transactional_id = request.transactional_id
    if transactional_id is None:
        for t in request.topic_data:
            for p in t.partition_data:
                records = p.records  # (the attributes byte first: most are not transactional)
                if records is not None and len(records) >= 61 \
                        and records[22] & TRANSACTIONAL_MASK and _transactional(records):
                    raise KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    acks = request.acks
    acks_error = acks not in VALID_ACKS
    old_codecs = not allows_zstd(version)
    by_id = uses_topic_ids(version)
    for t in request.topic_data:
        parts = []
        name = t.name
        if by_id:
            known = catalogue.get_by_id(t.topic_id)
            if known is None:
                responses.append(TopicProduceResponse(topic_id=t.topic_id, partition_responses=[
                    PartitionProduceResponse(index=p.index, error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                             base_offset=-1) for p in t.partition_data]))
                continue
            name = known.name
        internal = name in INTERNAL_TOPICS
        topic = catalogue.get(name)  # once per topic, not per partition
        if topic is None and not acks_error and not internal \
                and broker.config.auto_create_topics_enable:
            try:
                topics.auto_create(name)
            except KafkaError:
                pass  # an invalid name: each partition reports UNKNOWN_TOPIC_OR_PARTITION
            topic = catalogue.get(name)
        # the topic's partitions, looked up by index here rather than by Topic.partition (a
        # call per partition); an index out of range takes that call for its error
        logs = topic.partitions if topic is not None else ()
        count = len(logs)
        for p in t.partition_data:
            index = p.index
            try:
                if acks_error:
                    raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS)
                # the catalogue's own error (UNKNOWN_TOPIC_OR_PARTITION) for what is not there
                log = (logs[index] if 0 <= index < count
                       else topic.partition(index) if topic is not None
                       else topics.partition(name, index))
                if internal:  # ReplicaManager: clients may not write internal topics
                    raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                                     f"Cannot append to internal topic {name}")
                if multi:
                    refused = cluster.partition_error(node_id, topic.topic_id, name, index)
                    if refused is not None:
                        raise KafkaError(refused)
                if old_codecs:
                    _check_codec(p.records, version)
                if transactional_id is not None:
                    producer = _transactional(p.records)
                    if producer is not None:
                        _verify(ctx, transactional_id, name, index, log, producer)
                # (TimestampType is an IntEnum, CREATE_TIME 0: true for LOG_APPEND_TIME only)
                if now is None and log.config.timestamp_type:
                    now = ctx.now_ms()
                base_offset, _, append_time, start, duplicate = log.append(
                    p.records, NO_TIMESTAMP if now is None else now)
            except KafkaError as exc:
                parts.append(_failed(name, index, exc, version))
                continue
            if not duplicate:
                appended.append(log)
            if _Building is None:  # (the class grew something mutable_twin cannot reproduce)
                parts.append(_succeeded(index, base_offset, append_time, start))
                continue
            # _succeeded, written out (one call less per partition)
            answer = _Building()
            answer.index = index
            answer.error_code = 0
            answer.base_offset = base_offset
            answer.log_append_time_ms = append_time
            answer.log_start_offset = start
            answer.record_errors = []
            answer.error_message = None
            answer.current_leader = _NO_CURRENT_LEADER
            answer.__class__ = PartitionProduceResponse
            parts.append(answer)
        responses.append(_topic_answer(name, t.topic_id, parts))
    if appended:
        topics.notify_append(appended)
    if acks == 0:
        return None  # Kafka sends nothing back for acks=0
    return produce_response(responses)


HANDLER = Handler(API, "3-13", produce)
