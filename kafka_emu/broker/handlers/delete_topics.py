"""DeleteTopics v1-6 (v0 was removed in Kafka 4.0, KIP-896): v1-5 name topics; v6 names or ids (an unknown id is UNKNOWN_TOPIC_ID);
v5 error messages. Deleting a topic drops its log at once and every group's committed offsets
for it (Kafka's coordinator does the latter on the metadata update that deletes the topic)."""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.delete_topics import API, DeletableTopicResult, DeleteTopicsResponse
from . import Handler


def names_by_state(version: int) -> bool:
    return version >= 6


def has_error_message(version: int) -> bool:
    return version >= 5


async def delete_topics(ctx, request) -> DeleteTopicsResponse:
    v = ctx.version
    wanted = ([(t.name, t.topic_id) for t in request.topics] if names_by_state(v)
              else [(name, None) for name in request.topic_names])
    results = []
    for name, topic_id in wanted:
        try:
            topic = ctx.broker.delete_topic(name, topic_id)
        except KafkaError as exc:
            results.append(DeletableTopicResult(
                name=name if name is not None or not names_by_state(v) else None,
                topic_id=topic_id if topic_id is not None else DeletableTopicResult().topic_id,
                error_code=exc.code,
                error_message=exc.message if has_error_message(v) else None))
            continue
        results.append(DeletableTopicResult(name=topic.name, topic_id=topic.topic_id,
                                            error_code=ErrorCode.NONE))
    return DeleteTopicsResponse(responses=results)


HANDLER = Handler(API, "1-6", delete_topics)
