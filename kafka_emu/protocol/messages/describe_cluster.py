"""DescribeCluster (60): valid 0-2, flexible 0+ (KIP-700).

v1 EndpointType (KIP-919: 1 brokers, 2 controllers) and the MISMATCHED_ENDPOINT_TYPE /
UNSUPPORTED_ENDPOINT_TYPE errors; v2 IncludeFencedBrokers and each broker's IsFenced (KIP-1073).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, Api, Array, field, message, struct
from .metadata import AUTHORIZED_OPERATIONS_OMITTED


@message(api_key=60, kind="request", valid="0-2", flexible="0+")
class DescribeClusterRequest:
    include_cluster_authorized_operations: bool = field(BOOL, "0+")
    endpoint_type: int = field(INT8, "1+", default=1)
    include_fenced_brokers: bool = field(BOOL, "2+")


@struct
class DescribeClusterBroker:
    broker_id: int = field(INT32, "0+")
    host: str = field(STRING, "0+")
    port: int = field(INT32, "0+")
    rack: str | None = field(STRING, "0+", nullable="0+", default=None)
    is_fenced: bool = field(BOOL, "2+")


@message(api_key=60, kind="response", valid="0-2", flexible="0+")
class DescribeClusterResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    endpoint_type: int = field(INT8, "1+", default=1)
    cluster_id: str = field(STRING, "0+")
    controller_id: int = field(INT32, "0+", default=-1)
    brokers: list = field(Array(DescribeClusterBroker), "0+")
    cluster_authorized_operations: int = field(INT32, "0+", default=AUTHORIZED_OPERATIONS_OMITTED)


API = Api(60, "DescribeCluster", DescribeClusterRequest, DescribeClusterResponse)
