"""Which clients throttle themselves (KIP-219).

Since Kafka 2.0 a throttled response is sent at once with ``throttle_time_ms`` set, and the
broker then reads nothing more from that connection for the throttle time; the client is trusted
to hold back its requests meanwhile. That holds from the version each API bumped for KIP-219
(each response's ``shouldClientThrottle`` in Kafka); to older versions the broker instead holds
the response itself back for the throttle time. Used by the control plane's throttle fault.
"""

from __future__ import annotations

CLIENT_THROTTLES_FROM: dict[str, int] = {
    "Produce": 6, "Fetch": 8, "ListOffsets": 3, "Metadata": 6, "OffsetCommit": 4,
    "OffsetFetch": 4, "FindCoordinator": 2, "JoinGroup": 3, "Heartbeat": 2, "LeaveGroup": 2,
    "SyncGroup": 2, "DescribeGroups": 2, "ListGroups": 2, "ApiVersions": 2, "CreateTopics": 3,
    "DeleteTopics": 2, "DeleteRecords": 1, "InitProducerId": 1, "DeleteGroups": 1,
    "OffsetDelete": 0,
}


def client_throttles(api_name: str, version: int) -> bool:
    """Whether a client at this version honours throttle_time_ms itself (KIP-219)."""
    first = CLIENT_THROTTLES_FROM.get(api_name)
    return first is not None and version >= first
