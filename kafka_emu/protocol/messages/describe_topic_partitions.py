"""DescribeTopicPartitions (75): valid 0, flexible 0+ (KIP-966).

Paged topic/partition metadata: at most ResponsePartitionLimit partitions per answer, resumed
from a Cursor (topic name, partition index).
"""

import uuid

from ..schema import BOOL, INT16, INT32, STRING, UUID, Api, Array, field, message, struct
from .metadata import AUTHORIZED_OPERATIONS_OMITTED


@struct
class TopicRequest:
    name: str = field(STRING, "0+")


@struct
class Cursor:
    topic_name: str = field(STRING, "0+")
    partition_index: int = field(INT32, "0+")


@message(api_key=75, kind="request", valid="0", flexible="0+")
class DescribeTopicPartitionsRequest:
    topics: list = field(Array(TopicRequest), "0+")
    response_partition_limit: int = field(INT32, "0+", default=2000)
    cursor: Cursor | None = field(Cursor, "0+", nullable="0+", default=None)


@struct
class DescribeTopicPartitionsResponsePartition:
    error_code: int = field(INT16, "0+")
    partition_index: int = field(INT32, "0+")
    leader_id: int = field(INT32, "0+")
    leader_epoch: int = field(INT32, "0+", default=-1, ignorable=True)
    replica_nodes: list = field(Array(INT32), "0+")
    isr_nodes: list = field(Array(INT32), "0+")
    eligible_leader_replicas: list | None = field(Array(INT32), "0+", nullable="0+",
                                                  default=None)
    last_known_elr: list | None = field(Array(INT32), "0+", nullable="0+", default=None)
    offline_replicas: list = field(Array(INT32), "0+", ignorable=True)


@struct
class DescribeTopicPartitionsResponseTopic:
    error_code: int = field(INT16, "0+")
    name: str | None = field(STRING, "0+", nullable="0+")
    topic_id: uuid.UUID = field(UUID, "0+", ignorable=True)
    is_internal: bool = field(BOOL, "0+", ignorable=True)
    partitions: list = field(Array(DescribeTopicPartitionsResponsePartition), "0+")
    topic_authorized_operations: int = field(INT32, "0+", default=AUTHORIZED_OPERATIONS_OMITTED)


@message(api_key=75, kind="response", valid="0", flexible="0+")
class DescribeTopicPartitionsResponse:
    throttle_time_ms: int = field(INT32, "0+", ignorable=True)
    topics: list = field(Array(DescribeTopicPartitionsResponseTopic), "0+")
    next_cursor: Cursor | None = field(Cursor, "0+", nullable="0+", default=None)


API = Api(75, "DescribeTopicPartitions", DescribeTopicPartitionsRequest,
          DescribeTopicPartitionsResponse)
