"""AlterShareGroupOffsets (91): valid 0, flexible 0+ (KIP-932): set share-partitions' start
offsets of an empty share group."""

import uuid

from ..schema import INT16, INT32, INT64, STRING, UUID, Api, Array, field, message, struct


@struct
class AlterShareGroupOffsetsRequestPartition:
    partition_index: int = field(INT32, "0+")
    start_offset: int = field(INT64, "0+")


@struct
class AlterShareGroupOffsetsRequestTopic:
    topic_name: str = field(STRING, "0+")
    partitions: list = field(Array(AlterShareGroupOffsetsRequestPartition), "0+")


@message(api_key=91, kind="request", valid="0", flexible="0+")
class AlterShareGroupOffsetsRequest:
    group_id: str = field(STRING, "0+")
    topics: list = field(Array(AlterShareGroupOffsetsRequestTopic), "0+")


@struct
class AlterShareGroupOffsetsResponsePartition:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@struct
class AlterShareGroupOffsetsResponseTopic:
    topic_name: str = field(STRING, "0+")
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(AlterShareGroupOffsetsResponsePartition), "0+")


@message(api_key=91, kind="response", valid="0", flexible="0+")
class AlterShareGroupOffsetsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    responses: list = field(Array(AlterShareGroupOffsetsResponseTopic), "0+")


API = Api(91, "AlterShareGroupOffsets", AlterShareGroupOffsetsRequest,
          AlterShareGroupOffsetsResponse)
