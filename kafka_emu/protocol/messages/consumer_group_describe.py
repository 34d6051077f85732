"""ConsumerGroupDescribe (69): valid 0-1, flexible 0+ (KIP-848).

The describe call of the new protocol: group epoch, assignment epoch, the selected assignor and,
per member, its epoch, subscription, current and target assignment. v1 adds the member's
MemberType (KIP-1099: -1 unknown, 0 classic member, 1 consumer member).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, Api, Array, field, message, struct

INT32_MIN = -(2**31)  # AuthorizedOperations "not provided"


@message(api_key=69, kind="request", valid="0-1", flexible="0+")
class ConsumerGroupDescribeRequest:
    group_ids: list = field(Array(STRING), "0+")
    include_authorized_operations: bool = field(BOOL, "0+")


@struct
class ConsumerGroupDescribeTopicPartitions:
    topic_id: object = field(UUID, "0+")
    topic_name: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class ConsumerGroupDescribeAssignment:
    topic_partitions: list = field(Array(ConsumerGroupDescribeTopicPartitions), "0+")


@struct
class ConsumerGroupDescribeMember:
    member_id: str = field(STRING, "0+")
    instance_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    rack_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = field(INT32, "0+")
    client_id: str = field(STRING, "0+")
    client_host: str = field(STRING, "0+")
    subscribed_topic_names: list = field(Array(STRING), "0+")
    subscribed_topic_regex: str | None = field(STRING, "0+", nullable="0+", default=None)
    assignment: ConsumerGroupDescribeAssignment = field(ConsumerGroupDescribeAssignment, "0+")
    target_assignment: ConsumerGroupDescribeAssignment = field(ConsumerGroupDescribeAssignment,
                                                               "0+")
    member_type: int = field(INT8, "1+", default=-1, ignorable=True)


@struct
class ConsumerGroupDescribeGroup:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    group_id: str = field(STRING, "0+")
    group_state: str = field(STRING, "0+")
    group_epoch: int = field(INT32, "0+")
    assignment_epoch: int = field(INT32, "0+")
    assignor_name: str = field(STRING, "0+")
    members: list = field(Array(ConsumerGroupDescribeMember), "0+")
    authorized_operations: int = field(INT32, "0+", default=INT32_MIN)


@message(api_key=69, kind="response", valid="0-1", flexible="0+")
class ConsumerGroupDescribeResponse:
    throttle_time_ms: int = field(INT32, "0+")
    groups: list = field(Array(ConsumerGroupDescribeGroup), "0+")


API = Api(69, "ConsumerGroupDescribe", ConsumerGroupDescribeRequest,
          ConsumerGroupDescribeResponse)
