"""Topic operations: list the topics, create one.

Groups have their own family (``ops/groups.py``); topics live here because a test that drives
clients from another language often needs a topic before its first producer connects.
"""

from __future__ import annotations

import attrs

from ...errors import KafkaError
from .. import results as r
from ..operations import ControlError, operation


@operation("GET", "/topics")
def list_topics(broker, params) -> list[r.TopicInfo]:
    """List the topics with their ids and partition counts."""
    return [{"name": t.name, "topic_id": str(t.topic_id), "partitions": t.partitions}
            for t in sorted(broker.topics.all(), key=lambda t: t.name)]


@attrs.frozen(kw_only=True)
class CreateTopicParams:
    name: str = attrs.field(metadata={"doc": "the topic's name"})
    partitions: int = attrs.field(default=1, metadata={"doc": "how many partitions (>= 1)"})


@operation("POST", "/topics", CreateTopicParams)
def create_topic(broker, params: CreateTopicParams) -> r.TopicInfo:
    """Create a topic (409 if it exists, 400 for a bad name or fewer than 1 partition)."""
    if params.partitions < 1:
        raise ControlError(f"partitions must be at least 1, got {params.partitions}")
    if broker.topics.lookup(params.name) is not None:
        raise ControlError(f"topic {params.name!r} already exists", 409)
    try:
        info = broker.topics.create(params.name, params.partitions)
    except KafkaError as exc:  # an invalid or colliding name: nothing was created
        raise ControlError(f"cannot create topic {params.name!r}: {exc}") from None
    return {"name": info.name, "topic_id": str(info.topic_id), "partitions": info.partitions}
