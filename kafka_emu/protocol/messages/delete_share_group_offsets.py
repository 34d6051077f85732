"""DeleteShareGroupOffsets (92): valid 0, flexible 0+ (KIP-932): forget an empty share group's
share-partition state for whole topics."""

import uuid

from ..schema import INT16, INT32, STRING, UUID, Api, Array, field, message, struct


@struct
class DeleteShareGroupOffsetsRequestTopic:
    topic_name: str = field(STRING, "0+")


@message(api_key=92, kind="request", valid="0", flexible="0+")
class DeleteShareGroupOffsetsRequest:
    group_id: str = field(STRING, "0+")
    topics: list = field(Array(DeleteShareGroupOffsetsRequestTopic), "0+")


@struct
class DeleteShareGroupOffsetsResponseTopic:
    topic_name: str = field(STRING, "0+")
    topic_id: uuid.UUID = field(UUID, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=92, kind="response", valid="0", flexible="0+")
class DeleteShareGroupOffsetsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    responses: list = field(Array(DeleteShareGroupOffsetsResponseTopic), "0+")


API = Api(92, "DeleteShareGroupOffsets", DeleteShareGroupOffsetsRequest,
          DeleteShareGroupOffsetsResponse)
