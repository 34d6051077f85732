"""Metadata (3): valid 0-13, flexible 9+.

v1 nullable Topics (null = all topics; v0 uses an empty array for that), broker Rack,
ControllerId, IsInternal; v2 ClusterId; v3 throttle; v4 AllowAutoTopicCreation; v5
OfflineReplicas; v7 LeaderEpoch; v8 authorized operations (KIP-430); v9 flexible; v10 topic ids
(KIP-516); v11 drops the cluster authorized operations (moved to DescribeCluster); v12 nullable
topic names in responses; v13 top-level ErrorCode (KIP-1102).
"""

import uuid

from ..schema import BOOL, INT16, INT32, STRING, UUID, Api, Array, field, message, struct

# Kafka's "not requested" value for the authorized-operations bitfields.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


@struct
class MetadataRequestTopic:
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    name: str | None = field(STRING, "0+", nullable="10+")


@message(api_key=3, kind="request", valid="0-13", flexible="9+")
class MetadataRequest:
    topics: list | None = field(Array(MetadataRequestTopic), "0+", nullable="1+")
    allow_auto_topic_creation: bool = field(BOOL, "4+", default=True)
    include_cluster_authorized_operations: bool = field(BOOL, "8-10")
    include_topic_authorized_operations: bool = field(BOOL, "8+")


@struct
class MetadataResponseBroker:
    node_id: int = field(INT32, "0+")
    host: str = field(STRING, "0+")
    port: int = field(INT32, "0+")
    rack: str | None = field(STRING, "1+", nullable="1+", default=None, ignorable=True)


@struct
class MetadataResponsePartition:
    error_code: int = field(INT16, "0+")
    partition_index: int = field(INT32, "0+")
    leader_id: int = field(INT32, "0+")
    leader_epoch: int = field(INT32, "7+", default=-1, ignorable=True)
    replica_nodes: list = field(Array(INT32), "0+")
    isr_nodes: list = field(Array(INT32), "0+")
    offline_replicas: list = field(Array(INT32), "5+", ignorable=True)


@struct
class MetadataResponseTopic:
    error_code: int = field(INT16, "0+")
    name: str | None = field(STRING, "0+", nullable="12+")
    topic_id: uuid.UUID = field(UUID, "10+", ignorable=True)
    is_internal: bool = field(BOOL, "1+", ignorable=True)
    partitions: list = field(Array(MetadataResponsePartition), "0+")
    topic_authorized_operations: int = field(INT32, "8+", default=AUTHORIZED_OPERATIONS_OMITTED)


@message(api_key=3, kind="response", valid="0-13", flexible="9+")
class MetadataResponse:
    throttle_time_ms: int = field(INT32, "3+", ignorable=True)
    brokers: list = field(Array(MetadataResponseBroker), "0+")
    cluster_id: str | None = field(STRING, "2+", nullable="2+", default=None, ignorable=True)
    controller_id: int = field(INT32, "1+", default=-1, ignorable=True)
    topics: list = field(Array(MetadataResponseTopic), "0+")
    cluster_authorized_operations: int = field(INT32, "8-10",
                                               default=AUTHORIZED_OPERATIONS_OMITTED)
    error_code: int = field(INT16, "13+", ignorable=True)


API = Api(3, "Metadata", MetadataRequest, MetadataResponse)
