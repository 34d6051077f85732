"""CreatePartitions (37): valid 0-3, flexible 2+.

v1 same as v0 (responses before throttling); v2 flexible; v3 may answer
THROTTLING_QUOTA_EXCEEDED (KIP-599).
"""

from ..schema import BOOL, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class CreatePartitionsAssignment:
    broker_ids: list = field(Array(INT32), "0+")


@struct
class CreatePartitionsTopic:
    name: str = field(STRING, "0+")
    count: int = field(INT32, "0+")
    assignments: list | None = field(Array(CreatePartitionsAssignment), "0+", nullable="0+",
                                     default=None)


@message(api_key=37, kind="request", valid="0-3", flexible="2+")
class CreatePartitionsRequest:
    topics: list = field(Array(CreatePartitionsTopic), "0+")
    timeout_ms: int = field(INT32, "0+", default=60000)
    validate_only: bool = field(BOOL, "0+")


@struct
class CreatePartitionsTopicResult:
    name: str = field(STRING, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=37, kind="response", valid="0-3", flexible="2+")
class CreatePartitionsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    results: list = field(Array(CreatePartitionsTopicResult), "0+")


API = Api(37, "CreatePartitions", CreatePartitionsRequest, CreatePartitionsResponse)
