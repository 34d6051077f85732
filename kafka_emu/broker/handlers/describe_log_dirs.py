"""DescribeLogDirs v1-5 (Kafka 4.0 removed v0): v3 top-level ErrorCode, v4 TotalBytes and
UsableBytes, v5 IsCordoned (KIP-1066: the one in-memory dir is never cordoned). kafka-emu has one log dir, in memory (``LOG_DIR``); each partition's size is the
bytes its log holds, and a leader has no lag. Null topics means every partition; partitions
this broker does not hold are left out, as Kafka leaves them out. Capacity is unknown (-1).
"""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.messages.describe_log_dirs import (API, DescribeLogDirsPartition,
                                                    DescribeLogDirsResponse,
                                                    DescribeLogDirsResult, DescribeLogDirsTopic)
from . import Handler

LOG_DIR = "/kafka-emu/in-memory"  # a name for admin tools; nothing is written to disk


async def describe_log_dirs(ctx, request) -> DescribeLogDirsResponse:
    catalogue = ctx.broker.topics.catalogue
    if request.topics is None:
        wanted = [(t.name, range(t.num_partitions)) for t in catalogue]
    else:
        wanted = [(t.topic, t.partitions) for t in request.topics]
    topics: dict[str, list] = {}
    for name, partitions in wanted:
        topic = catalogue.get(name)
        if topic is None:
            continue
        for index in partitions:
            if 0 <= index < topic.num_partitions:
                topics.setdefault(name, []).append(DescribeLogDirsPartition(
                    partition_index=index, partition_size=topic.partitions[index].size_bytes,
                    offset_lag=0, is_future_key=False))
    return DescribeLogDirsResponse(error_code=ErrorCode.NONE, results=[DescribeLogDirsResult(
        error_code=ErrorCode.NONE, log_dir=LOG_DIR,
        topics=[DescribeLogDirsTopic(name=n, partitions=ps) for n, ps in topics.items()])])


HANDLER = Handler(API, "1-5", describe_log_dirs)
