"""ShareGroupDescribe (77): valid 1, flexible 0+ (KIP-932).

Per group: state (Empty, Stable, Dead), group epoch, assignment epoch, the assignor ("simple") and
per member its epoch, rack, client, subscription and assignment (topics by id and name). v0 was
Kafka 4.0's early access, removed in 4.1.
"""

from ..schema import BOOL, INT16, INT32, STRING, UUID, Api, Array, field, message, struct

INT32_MIN = -(2**31)  # AuthorizedOperations "not provided"


@message(api_key=77, kind="request", valid="1", flexible="0+")
class ShareGroupDescribeRequest:
    group_ids: list = field(Array(STRING), "0+")
    include_authorized_operations: bool = field(BOOL, "0+")


@struct
class ShareGroupDescribeTopicPartitions:
    topic_id: object = field(UUID, "0+")
    topic_name: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class ShareGroupDescribeAssignment:
    topic_partitions: list = field(Array(ShareGroupDescribeTopicPartitions), "0+")


@struct
class ShareGroupDescribeMember:
    member_id: str = field(STRING, "0+")
    rack_id: str | None = field(STRING, "0+", nullable="0+", default=None)
    member_epoch: int = field(INT32, "0+")
    client_id: str = field(STRING, "0+")
    client_host: str = field(STRING, "0+")
    subscribed_topic_names: list = field(Array(STRING), "0+")
    assignment: ShareGroupDescribeAssignment = field(ShareGroupDescribeAssignment, "0+")


@struct
class ShareGroupDescribeGroup:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    group_id: str = field(STRING, "0+")
    group_state: str = field(STRING, "0+")
    group_epoch: int = field(INT32, "0+")
    assignment_epoch: int = field(INT32, "0+")
    assignor_name: str = field(STRING, "0+")
    members: list = field(Array(ShareGroupDescribeMember), "0+")
    authorized_operations: int = field(INT32, "0+", default=INT32_MIN)


@message(api_key=77, kind="response", valid="1", flexible="0+")
class ShareGroupDescribeResponse:
    throttle_time_ms: int = field(INT32, "0+")
    groups: list = field(Array(ShareGroupDescribeGroup), "0+")


API = Api(77, "ShareGroupDescribe", ShareGroupDescribeRequest, ShareGroupDescribeResponse)
