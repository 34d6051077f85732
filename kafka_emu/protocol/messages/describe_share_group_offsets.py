"""DescribeShareGroupOffsets (90): valid 0-1, flexible 0+ (KIP-932). v1 adds each partition's
Lag (KIP-1226). Topics null: every topic-partition the group has share state for."""

import uuid

from ..schema import INT16, INT32, INT64, STRING, UUID, Api, Array, field, message, struct


@struct
class DescribeShareGroupOffsetsRequestTopic:
    topic_name: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class DescribeShareGroupOffsetsRequestGroup:
    group_id: str = field(STRING, "0+")
    topics: list | None = field(Array(DescribeShareGroupOffsetsRequestTopic), "0+",
                                nullable="0+")


@message(api_key=90, kind="request", valid="0-1", flexible="0+")
class DescribeShareGroupOffsetsRequest:
    groups: list = field(Array(DescribeShareGroupOffsetsRequestGroup), "0+")


@struct
class DescribeShareGroupOffsetsResponsePartition:
    partition_index: int = field(INT32, "0+")
    start_offset: int = field(INT64, "0+")
    leader_epoch: int = field(INT32, "0+")
    lag: int = field(INT64, "1+", default=-1)
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@struct
class DescribeShareGroupOffsetsResponseTopic:
    topic_name: str = field(STRING, "0+")
    topic_id: uuid.UUID = field(UUID, "0+")
    partitions: list = field(Array(DescribeShareGroupOffsetsResponsePartition), "0+")


@struct
class DescribeShareGroupOffsetsResponseGroup:
    group_id: str = field(STRING, "0+")
    topics: list = field(Array(DescribeShareGroupOffsetsResponseTopic), "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=90, kind="response", valid="0-1", flexible="0+")
class DescribeShareGroupOffsetsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    groups: list = field(Array(DescribeShareGroupOffsetsResponseGroup), "0+")


API = Api(90, "DescribeShareGroupOffsets", DescribeShareGroupOffsetsRequest,
          DescribeShareGroupOffsetsResponse)
