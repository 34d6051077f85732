"""Checks a ConsumerGroupHeartbeat passes before the coordinator looks at its group, and the
member ids the coordinator makes, both as Kafka 4.x has them.

validate() is GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid in its order
(the member id first, at v1+ or for a known member's epoch; then the group, instance and rack ids;
then what each epoch needs; then the assignor), followed by the regex check Kafka makes in the
shard (Utils.throwIfRegularExpressionIsInvalid). Each refusal is INVALID_REQUEST,
UNSUPPORTED_ASSIGNOR or INVALID_REGULAR_EXPRESSION with Kafka's message.
"""

from __future__ import annotations

import base64
import uuid

from kafka_emu.errors import ErrorCode, KafkaError

from ..core import Core, default_member_uuid
from .commands import ConsumerGroupHeartbeat
from .model import LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from .regex import regex_error


def new_member_id(core: Core) -> str:
    """A member id for a v0 member that joined without one, as Kafka 4.x makes it:
    Uuid.randomUuid().toString(), the 16 bytes in unpadded base64url (22 characters), never
    starting with '-' (Kafka draws again) nor all zeros. A coordinator built with its own
    ``new_member_uuid`` (tests) gets that instead."""
    if core.new_member_uuid is not default_member_uuid:
        return core.new_member_uuid()
    while True:
        raw = uuid.uuid4().bytes
        text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if not text.startswith("-") and any(raw):
            return text


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


# ---------------------------------------------------------------------------------- validation
def blank(value: str | None) -> bool:
    """Kafka's throwIfEmptyString: a set value that Java's String.trim() empties (it strips every
    character up to U+0020 from both ends), so whitespace-only ids are refused like empty ones."""
    return value is not None and all(c <= " " for c in value)


def validate(core: Core, cmd: ConsumerGroupHeartbeat) -> None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid (Kafka 4.x), in its
    order: the member id first (v1+, or a known member's epoch), then the ids, then per epoch."""
    epoch = cmd.member_epoch
    if (cmd.member_id_required or epoch > 0 or epoch == LEAVE_EPOCH) and blank(cmd.member_id):
        raise _invalid("MemberId can't be empty.")
    if blank(cmd.group_id):
        raise _invalid("GroupId can't be empty.")
    if blank(cmd.instance_id):
        raise _invalid("InstanceId can't be empty.")
    if blank(cmd.rack_id):
        raise _invalid("RackId can't be empty.")
    if epoch == 0:
        if cmd.rebalance_timeout_ms == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        # Kafka: topicPartitions() == null || !topicPartitions().isEmpty(), so even a topic
        # with no partitions, or one of an unknown id, is refused.
        if cmd.owned is None or cmd.owned or cmd.owned_entries:
            raise _invalid("TopicPartitions must be empty when (re-)joining.")
        # An empty list of names or an empty regex is accepted: a member of no topic.
        if cmd.subscribed_topic_names is None and cmd.subscribed_topic_regex is None:
            raise _invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null "
                           "when (re-)joining.")
    elif epoch == STATIC_LEAVE_EPOCH:
        if cmd.instance_id is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        raise _invalid("MemberEpoch is invalid.")
    assignors = core.config.group_consumer_assignors
    if cmd.server_assignor is not None and cmd.server_assignor not in assignors:
        raise KafkaError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                         f"ServerAssignor {cmd.server_assignor} is not supported. Supported assignors: "
                         f"{', '.join(assignors)}.")
    problem = None if cmd.subscribed_topic_regex is None else regex_error(cmd.subscribed_topic_regex)
    if problem is not None:  # Kafka's Utils.throwIfRegularExpressionIsInvalid, in the shard
        raise KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                         f"SubscribedTopicRegex `{cmd.subscribed_topic_regex}` is not a valid regular "
                         f"expression: {problem}.")
