"""DescribeLogDirs (35): valid 1-5, flexible 2+ (Kafka 4.0 removed v0, KIP-896, and so do we).

v1 same as v0 (responses before throttling); v2 flexible; v3 top-level ErrorCode; v4 TotalBytes
and UsableBytes per log dir (KIP-827); v5 IsCordoned per log dir (KIP-1066, Kafka 4.3).
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class DescribableLogDirTopic:
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@message(api_key=35, kind="request", valid="1-5", flexible="2+")
class DescribeLogDirsRequest:
    topics: list | None = field(Array(DescribableLogDirTopic), "0+", nullable="0+",
                                default=None)


@struct
class DescribeLogDirsPartition:
    partition_index: int = field(INT32, "0+")
    partition_size: int = field(INT64, "0+")
    offset_lag: int = field(INT64, "0+")
    is_future_key: bool = field(BOOL, "0+")


@struct
class DescribeLogDirsTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(DescribeLogDirsPartition), "0+")


@struct
class DescribeLogDirsResult:
    error_code: int = field(INT16, "0+")
    log_dir: str = field(STRING, "0+")
    topics: list = field(Array(DescribeLogDirsTopic), "0+")
    total_bytes: int = field(INT64, "4+", default=-1, ignorable=True)
    usable_bytes: int = field(INT64, "4+", default=-1, ignorable=True)
    is_cordoned: bool = field(BOOL, "5+", ignorable=True)


@message(api_key=35, kind="response", valid="1-5", flexible="2+")
class DescribeLogDirsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "3+", ignorable=True)
    results: list = field(Array(DescribeLogDirsResult), "0+")


API = Api(35, "DescribeLogDirs", DescribeLogDirsRequest, DescribeLogDirsResponse)
