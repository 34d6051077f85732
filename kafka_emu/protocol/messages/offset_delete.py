"""OffsetDelete (47): valid 0 only, never flexible (KIP-496); response ErrorCode, then throttle."""

from ..schema import INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class OffsetDeleteRequestPartition:
    partition_index: int = field(INT32, "0+")


@struct
class OffsetDeleteRequestTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(OffsetDeleteRequestPartition), "0+")


@message(api_key=47, kind="request", valid="0")
class OffsetDeleteRequest:
    group_id: str = field(STRING, "0+")
    topics: list = field(Array(OffsetDeleteRequestTopic), "0+")


@struct
class OffsetDeleteResponsePartition:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")


@struct
class OffsetDeleteResponseTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(OffsetDeleteResponsePartition), "0+")


@message(api_key=47, kind="response", valid="0")
class OffsetDeleteResponse:
    error_code: int = field(INT16, "0+")
    throttle_time_ms: int = field(INT32, "0+", ignorable=True)
    topics: list = field(Array(OffsetDeleteResponseTopic), "0+")


API = Api(47, "OffsetDelete", OffsetDeleteRequest, OffsetDeleteResponse)
