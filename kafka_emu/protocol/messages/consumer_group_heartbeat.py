"""ConsumerGroupHeartbeat (68): valid 0-1, flexible 0+ (KIP-848).

The one request of the new consumer group protocol: join (MemberEpoch 0), heartbeat and
acknowledge revocations (MemberEpoch > 0, owned partitions), leave (-1), static leave (-2).
Null fields mean "unchanged since the last heartbeat". v1 adds SubscribedTopicRegex and makes
the client generate its member id (KIP-1082); INVALID_REGULAR_EXPRESSION is a v1+ error.
"""

from ..schema import INT16, INT32, STRING, UUID, Api, Array, field, message, struct


@struct
class ConsumerGroupHeartbeatTopicPartitions:
    topic_id: object = field(UUID, "0+")
    partitions: list = field(Array(INT32), "0+")


@message(api_key=68, kind="request", valid="0-1", flexible="0+")
class ConsumerGroupHeartbeatRequest:
    group_id: str = field(STRING, "0+")
    member_id: str = field(STRING, "0+")
    member_epoch: int = field(INT32, "0+")
    instance_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    rack_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    rebalance_timeout_ms: int = field(INT32, "0+", default=-1)
    subscribed_topic_names: list | None = field(Array(STRING), "0+", nullable="0+", default=None)
    subscribed_topic_regex: str | None = field(STRING, "1+", nullable="1+", default=None)
    server_assignor: str | None = field(STRING, "0+", nullable="0+", default=None)
    topic_partitions: list | None = field(Array(ConsumerGroupHeartbeatTopicPartitions), "0+",
                                          nullable="0+", default=None)


@struct
class ConsumerGroupHeartbeatAssignment:
    topic_partitions: list = field(Array(ConsumerGroupHeartbeatTopicPartitions), "0+")


@message(api_key=68, kind="response", valid="0-1", flexible="0+")
class ConsumerGroupHeartbeatResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = field(INT32, "0+")
    heartbeat_interval_ms: int = field(INT32, "0+")
    assignment: ConsumerGroupHeartbeatAssignment | None = field(
        ConsumerGroupHeartbeatAssignment, "0+", nullable="0+", default=None)


API = Api(68, "ConsumerGroupHeartbeat", ConsumerGroupHeartbeatRequest,
          ConsumerGroupHeartbeatResponse)
