"""ShareGroupHeartbeat (76): valid 1, flexible 0+ (KIP-932).

The one membership request of share groups: join (MemberEpoch 0, SubscribedTopicNames set),
heartbeat, leave (-1). Null fields mean "unchanged since the last heartbeat". The client makes
its own member id. v0 was Kafka 4.0's early access and was removed in 4.1; v1 is the first stable
version (what Kafka 4.2 serves). The assignment names topics by id.
"""

from ..schema import INT16, INT32, STRING, UUID, Api, Array, field, message, struct


@message(api_key=76, kind="request", valid="1", flexible="0+")
class ShareGroupHeartbeatRequest:
    group_id: str = field(STRING, "0+")
    member_id: str = field(STRING, "0+")
    member_epoch: int = field(INT32, "0+")
    rack_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    subscribed_topic_names: list | None = field(Array(STRING), "0+", nullable="0+", default=None)


@struct
class ShareGroupHeartbeatTopicPartitions:
    topic_id: object = field(UUID, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class ShareGroupHeartbeatAssignment:
    topic_partitions: list = field(Array(ShareGroupHeartbeatTopicPartitions), "0+")


@message(api_key=76, kind="response", valid="1", flexible="0+")
class ShareGroupHeartbeatResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = field(INT32, "0+")
    heartbeat_interval_ms: int = field(INT32, "0+")
    assignment: ShareGroupHeartbeatAssignment | None = field(
        ShareGroupHeartbeatAssignment, "0+", nullable="0+", default=None)


API = Api(76, "ShareGroupHeartbeat", ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse)
