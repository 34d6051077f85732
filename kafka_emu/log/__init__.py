"""Pure, synchronous data-path storage: topics, partition logs, record batches, producer state.

Theory of operation
-------------------
Nothing here reads a clock, opens a socket or imports trio: the broker's Produce, Fetch,
ListOffsets, CreateTopics, DeleteTopics, DeleteRecords, InitProducerId and Metadata handlers call
in with plain values (time as ``now_ms``) and get values back, or a ``KafkaError`` whose ``.code``
is the wire error for that topic or partition.

* ``catalogue``  topics by name and id, creation/deletion rules.
* ``partition``  one partition's log: append, read, offsets by timestamp, DeleteRecords, retention.
* ``batch``      the magic-2 batch header: framing, validation, offset rewrite. Header only.
* ``records``    building and reading uncompressed batches (tests, exact ListOffsets).
* ``producers``  producer ids, idempotent sequence checks, transactional producer state.
* ``txn_index``  open transactions (the last stable offset) and the aborted-transactions index.
* ``config``     the topic configs that change data-path behaviour.
"""

from kafka_emu.log.batch import (
    BatchHeader,
    Compression,
    TimestampType,
    crc_is_valid,
    iter_batches,
    parse_header,
    split_batches,
    validate_produce_records,
    with_base_offset,
)
from kafka_emu.log.catalogue import Topic, TopicCatalogue, topic_name_error, validate_topic_name
from kafka_emu.log.config import LogConfig
from kafka_emu.log.partition import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    NOT_FOUND,
    AppendResult,
    PartitionLog,
    TimestampAndOffset,
)
from kafka_emu.log.producers import ProducerIdAllocator, ProducerIdAndEpoch, ProducerStateTable
from kafka_emu.log.records import DecodedRecord, Record, build_batch, decode_records
from kafka_emu.log.txn_index import AbortedTxn, TxnIndex

__all__ = [
    "AbortedTxn",
    "TxnIndex",
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "NOT_FOUND",
    "AppendResult",
    "BatchHeader",
    "Compression",
    "DecodedRecord",
    "LogConfig",
    "PartitionLog",
    "ProducerIdAllocator",
    "ProducerIdAndEpoch",
    "ProducerStateTable",
    "Record",
    "TimestampAndOffset",
    "TimestampType",
    "Topic",
    "TopicCatalogue",
    "build_batch",
    "crc_is_valid",
    "decode_records",
    "iter_batches",
    "parse_header",
    "split_batches",
    "topic_name_error",
    "validate_produce_records",
    "validate_topic_name",
    "with_base_offset",
]
