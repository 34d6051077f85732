"""Topic operations: list the topics, create one.

Groups have their own family (``ops/groups.py``); topics live here because a test that drives
clients from another language often needs a topic before its first producer connects.

Internal topics are refused (400). Kafka's CreateTopics refuses only ``__cluster_metadata``
(INVALID_REQUEST, "Creation of internal topic __cluster_metadata is prohibited.", as here) and
would create an absent ``__consumer_offsets`` with whatever partition count it is given (its
group coordinator still maps groups by offsets.topic.num.partitions, so the groups that hash past
that count find no coordinator); the broker creates its
internal topics itself, on first need, with their configured partition counts, so a test never
needs to, and one that tries is refused with the reason. One that exists is a 409, as Kafka's
TOPIC_ALREADY_EXISTS.
"""

from __future__ import annotations

import attrs

from ...errors import KafkaError
from ...log.catalogue import INTERNAL_TOPICS, MAX_RECORDS_PER_USER_OP
from .. import results as r
from ..operations import ControlError, bounded, operation

CLUSTER_METADATA_TOPIC = "__cluster_metadata"  # KRaft's own log: never a topic
# Kafka's controller creates a topic in one batch of at most MAX_RECORDS_PER_USER_OP records (the
# topic, then one per partition): more partitions is POLICY_VIOLATION there
MAX_PARTITIONS = MAX_RECORDS_PER_USER_OP - 1


def refuse_internal(name: str) -> None:
    """ControlError (400) for a name the broker keeps for itself (see the module doc)."""
    if name == CLUSTER_METADATA_TOPIC:
        raise ControlError(f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited.")
    if name in INTERNAL_TOPICS:
        raise ControlError(f"topic {name!r} is internal: the broker creates it itself, on first "
                           "need, with its configured partition count (offsets.topic.num."
                           "partitions for __consumer_offsets)")


@operation("GET", "/topics")
def list_topics(broker, params) -> list[r.TopicInfo]:
    """List the topics with their ids and partition counts."""
    return [{"name": t.name, "topic_id": str(t.topic_id), "partitions": t.partitions}
            for t in sorted(broker.topics.all(), key=lambda t: t.name)]


@attrs.frozen(kw_only=True)
class CreateTopicParams:
    name: str = attrs.field(metadata={"doc": "the topic's name"})
    partitions: int = bounded(1, MAX_PARTITIONS, default=1, doc="how many partitions")


@operation("POST", "/topics", CreateTopicParams)
def create_topic(broker, params: CreateTopicParams) -> r.TopicInfo:
    """Create a topic (409 if it exists; 400 for a bad or internal name, or a partition count
    out of 1..9999)."""
    if broker.topics.lookup(params.name) is not None:
        raise ControlError(f"topic {params.name!r} already exists", 409)
    refuse_internal(params.name)
    try:
        info = broker.topics.create(params.name, params.partitions)
    except KafkaError as exc:  # an invalid or colliding name: nothing was created
        raise ControlError(f"cannot create topic {params.name!r}: {exc}") from None
    return {"name": info.name, "topic_id": str(info.topic_id), "partitions": info.partitions}
