"""CreateTopics (19): valid 0-7, flexible 5+ (Kafka 4.0 removed v0-1; we still parse them).

v1 validateOnly and per-topic ErrorMessage; v2 throttle; v4 NumPartitions/ReplicationFactor may
be -1 without assignments (KIP-464); v5 flexible, and the response echoes the created topic's
partitions, replication factor and configs (KIP-525), with TopicConfigErrorCode as tagged field
0; v6 THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 response TopicId.
"""

import uuid

from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, Api, Array, field, message, struct


@struct
class CreatableReplicaAssignment:
    partition_index: int = field(INT32, "0+")
    broker_ids: list = field(Array(INT32), "0+")


@struct
class CreatableTopicConfig:
    name: str = field(STRING, "0+")
    value: str | None = field(STRING, "0+", nullable="0+")


@struct
class CreatableTopic:
    name: str = field(STRING, "0+")
    num_partitions: int = field(INT32, "0+")
    replication_factor: int = field(INT16, "0+")
    assignments: list = field(Array(CreatableReplicaAssignment), "0+")
    configs: list = field(Array(CreatableTopicConfig), "0+")


@message(api_key=19, kind="request", valid="0-7", flexible="5+")
class CreateTopicsRequest:
    topics: list = field(Array(CreatableTopic), "0+")
    timeout_ms: int = field(INT32, "0+", default=60000)
    validate_only: bool = field(BOOL, "1+")


@struct
class CreatableTopicConfigs:
    name: str = field(STRING, "5+")
    value: str | None = field(STRING, "5+", nullable="5+")
    read_only: bool = field(BOOL, "5+")
    config_source: int = field(INT8, "5+", default=-1, ignorable=True)
    is_sensitive: bool = field(BOOL, "5+")


@struct
class CreatableTopicResult:
    name: str = field(STRING, "0+")
    topic_id: uuid.UUID = field(UUID, "7+", ignorable=True)
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "1+", nullable="0+", ignorable=True)
    topic_config_error_code: int = field(INT16, "5+", tag=0, tagged="5+", ignorable=True)
    num_partitions: int = field(INT32, "5+", default=-1, ignorable=True)
    replication_factor: int = field(INT16, "5+", default=-1, ignorable=True)
    configs: list | None = field(Array(CreatableTopicConfigs), "5+", nullable="5+",
                                 ignorable=True)


@message(api_key=19, kind="response", valid="0-7", flexible="5+")
class CreateTopicsResponse:
    throttle_time_ms: int = field(INT32, "2+", ignorable=True)
    topics: list = field(Array(CreatableTopicResult), "0+")


API = Api(19, "CreateTopics", CreateTopicsRequest, CreateTopicsResponse)
