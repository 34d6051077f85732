"""DeleteRecords (21): valid 0-2, flexible 2+.

v1 same as v0 (throttle before responding); v2 flexible. Offset -1 means "up to the high
watermark".
"""

from ..schema import INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class DeleteRecordsPartition:
    partition_index: int = field(INT32, "0+")
    offset: int = field(INT64, "0+")


@struct
class DeleteRecordsTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(DeleteRecordsPartition), "0+")


@message(api_key=21, kind="request", valid="0-2", flexible="2+")
class DeleteRecordsRequest:
    topics: list = field(Array(DeleteRecordsTopic), "0+")
    timeout_ms: int = field(INT32, "0+")


@struct
class DeleteRecordsPartitionResult:
    partition_index: int = field(INT32, "0+")
    low_watermark: int = field(INT64, "0+")
    error_code: int = field(INT16, "0+")


@struct
class DeleteRecordsTopicResult:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(DeleteRecordsPartitionResult), "0+")


@message(api_key=21, kind="response", valid="0-2", flexible="2+")
class DeleteRecordsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    topics: list = field(Array(DeleteRecordsTopicResult), "0+")


API = Api(21, "DeleteRecords", DeleteRecordsRequest, DeleteRecordsResponse)
