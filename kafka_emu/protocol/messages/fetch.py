"""Fetch (1): valid 4-18, flexible 12+.

v4 is Kafka 4.0's baseline (v0-3 removed, KIP-896): IsolationLevel, LastStableOffset and
AbortedTransactions. v5 LogStartOffset; v7 fetch sessions (KIP-227: SessionId, SessionEpoch,
ForgottenTopicsData, top-level ErrorCode); v9 CurrentLeaderEpoch (KIP-320); v10 zstd; v11 RackId
and PreferredReadReplica (KIP-392); v12 flexible, LastFetchedEpoch, tagged ClusterId (tag 0) and
per-partition DivergingEpoch/CurrentLeader/SnapshotId (tags 0-2); v13 topic ids replace names
(KIP-516); v14 OFFSET_MOVED_TO_TIERED_STORAGE; v15 ReplicaId moves into the tagged ReplicaState
(tag 1, KIP-903); v16 tagged NodeEndpoints (tag 0, KIP-951); v17 tagged ReplicaDirectoryId
(tag 0, KIP-853); v18 the replica's HighWatermark per partition (tag 1, KIP-1166; followers only).
"""

import uuid

from ..schema import (INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Api, Array, field,
                      message, struct)


@struct
class ReplicaState:
    replica_id: int = field(INT32, "15+", default=-1)
    replica_epoch: int = field(INT64, "15+", default=-1)


@struct
class FetchPartition:
    partition: int = field(INT32, "0+")
    current_leader_epoch: int = field(INT32, "9+", default=-1, ignorable=True)
    fetch_offset: int = field(INT64, "0+")
    last_fetched_epoch: int = field(INT32, "12+", default=-1)
    log_start_offset: int = field(INT64, "5+", default=-1, ignorable=True)
    partition_max_bytes: int = field(INT32, "0+")
    replica_directory_id: uuid.UUID = field(UUID, "17+", tag=0, tagged="17+", ignorable=True)
    high_watermark: int = field(INT64, "18+", default=(1 << 63) - 1, tag=1, tagged="18+",
                                ignorable=True)


@struct
class FetchTopic:
    topic: str = field(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "13+", ignorable=True)
    partitions: list = field(Array(FetchPartition), "0+")


@struct
class ForgottenTopic:
    topic: str = field(STRING, "7-12", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "13+", ignorable=True)
    partitions: list = field(Array(INT32), "7+")


@message(api_key=1, kind="request", valid="4-18", flexible="12+")
class FetchRequest:
    cluster_id: str | None = field(STRING, "12+", nullable="12+", default=None, tag=0,
                                   tagged="12+", ignorable=True)
    replica_id: int = field(INT32, "0-14", default=-1)
    replica_state: ReplicaState = field(ReplicaState, "15+", tag=1, tagged="15+")
    max_wait_ms: int = field(INT32, "0+")
    min_bytes: int = field(INT32, "0+")
    max_bytes: int = field(INT32, "3+", default=0x7FFFFFFF, ignorable=True)
    isolation_level: int = field(INT8, "4+", ignorable=True)
    session_id: int = field(INT32, "7+", ignorable=True)
    session_epoch: int = field(INT32, "7+", default=-1, ignorable=True)
    topics: list = field(Array(FetchTopic), "0+")
    forgotten_topics_data: list = field(Array(ForgottenTopic), "7+")
    rack_id: str = field(STRING, "11+", ignorable=True)


@struct
class EpochEndOffset:
    epoch: int = field(INT32, "12+", default=-1)
    end_offset: int = field(INT64, "12+", default=-1)


@struct
class LeaderIdAndEpoch:
    leader_id: int = field(INT32, "12+", default=-1)
    leader_epoch: int = field(INT32, "12+", default=-1)


@struct
class SnapshotId:
    end_offset: int = field(INT64, "0+", default=-1)
    epoch: int = field(INT32, "0+", default=-1)


@struct
class AbortedTransaction:
    producer_id: int = field(INT64, "4+")
    first_offset: int = field(INT64, "4+")


@struct
class PartitionData:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    high_watermark: int = field(INT64, "0+")
    last_stable_offset: int = field(INT64, "4+", default=-1, ignorable=True)
    log_start_offset: int = field(INT64, "5+", default=-1, ignorable=True)
    diverging_epoch: EpochEndOffset = field(EpochEndOffset, "12+", tag=0, tagged="12+")
    current_leader: LeaderIdAndEpoch = field(LeaderIdAndEpoch, "12+", tag=1, tagged="12+")
    snapshot_id: SnapshotId = field(SnapshotId, "12+", tag=2, tagged="12+")
    aborted_transactions: list | None = field(Array(AbortedTransaction), "4+", nullable="4+",
                                              ignorable=True)
    preferred_read_replica: int = field(INT32, "11+", default=-1)
    records: bytes | None = field(RECORDS, "0+", nullable="0+")


@struct
class FetchableTopicResponse:
    topic: str = field(STRING, "0-12", ignorable=True)
    topic_id: uuid.UUID = field(UUID, "13+", ignorable=True)
    partitions: list = field(Array(PartitionData), "0+")


@struct
class NodeEndpoint:
    node_id: int = field(INT32, "16+")
    host: str = field(STRING, "16+")
    port: int = field(INT32, "16+")
    rack: str | None = field(STRING, "16+", nullable="16+", default=None)


@message(api_key=1, kind="response", valid="4-18", flexible="12+")
class FetchResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    error_code: int = field(INT16, "7+", ignorable=True)
    session_id: int = field(INT32, "7+")
    responses: list = field(Array(FetchableTopicResponse), "0+")
    node_endpoints: list = field(Array(NodeEndpoint), "16+", tag=0, tagged="16+")


API = Api(1, "Fetch", FetchRequest, FetchResponse)
