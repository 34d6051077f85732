"""DeleteTopics (20): valid 0-6, flexible 4+ (Kafka 4.0 removed v0; we still parse it).

v0-3 identical apart from v1 throttle (v3 may return TOPIC_DELETION_DISABLED); v4 flexible; v5
response ErrorMessage and THROTTLING_QUOTA_EXCEEDED (KIP-599); v6 the request names topics by
name or id (``topics`` replaces ``topic_names``) and responses carry TopicId with a nullable
Name (KIP-516).
"""

import uuid

from ..schema import INT16, INT32, STRING, UUID, Api, Array, field, message, struct


@struct
class DeleteTopicState:
    name: str | None = field(STRING, "6+", nullable="6+", default=None)
    topic_id: uuid.UUID = field(UUID, "6+")


@message(api_key=20, kind="request", valid="0-6", flexible="4+")
class DeleteTopicsRequest:
    topics: list = field(Array(DeleteTopicState), "6+")
    topic_names: list = field(Array(STRING), "0-5", ignorable=True)
    timeout_ms: int = field(INT32, "0+")


@struct
class DeletableTopicResult:
    name: str | None = field(STRING, "0+", nullable="6+")
    topic_id: uuid.UUID = field(UUID, "6+", ignorable=True)
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "5+", nullable="5+", default=None, ignorable=True)


@message(api_key=20, kind="response", valid="0-6", flexible="4+")
class DeleteTopicsResponse:
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    responses: list = field(Array(DeletableTopicResult), "0+")


API = Api(20, "DeleteTopics", DeleteTopicsRequest, DeleteTopicsResponse)
