"""ElectLeaders v0-2 (v1 election type and top-level ErrorCode, KIP-460; v2 flexible).

With one replica per partition the leader is always the preferred replica and always in sync,
so an election is never needed: each named partition answers ELECTION_NOT_NEEDED, an unknown
one UNKNOWN_TOPIC_OR_PARTITION, as the controller answers (ReplicationControlManager
.electLeaders). Null partitions means all of them, and then Kafka leaves out the partitions
that need no election -- here every one. An election type other than preferred (0) or unclean
(1) is INVALID_REQUEST for the whole request. In a cluster (broker/cluster.py) a preferred election
moves leadership to the first replica when it runs and is in sync (PREFERRED_LEADER_NOT_AVAILABLE
otherwise), an unclean one gives a leaderless partition a running replica
(ELIGIBLE_LEADERS_NOT_AVAILABLE if none runs); either bumps the leader epoch.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.elect_leaders import (API, ElectLeadersResponse, PartitionResult,
                                                ReplicaElectionResult)
from . import Handler

PREFERRED, UNCLEAN = 0, 1


def _elect(ctx, catalogue, topic: str, partition: int, unclean: bool) -> PartitionResult:
    found = catalogue.get(topic)
    if found is None:
        return PartitionResult(partition_id=partition,
                               error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               error_message=f"No such topic as {topic}")
    if not 0 <= partition < found.num_partitions:
        return PartitionResult(partition_id=partition,
                               error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               error_message=f"No such partition as {topic}-{partition}")
    if ctx.broker.cluster.multi:
        code = ctx.broker.cluster_moves.elect(found, partition, unclean)
        return PartitionResult(partition_id=partition, error_code=code,
                               error_message=None if code == ErrorCode.NONE else code.message)
    return PartitionResult(partition_id=partition, error_code=ErrorCode.ELECTION_NOT_NEEDED)


async def elect_leaders(ctx, request) -> ElectLeadersResponse:
    if request.election_type not in (PREFERRED, UNCLEAN):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unknown election type {request.election_type}")
    catalogue = ctx.broker.topics.catalogue
    unclean = request.election_type == UNCLEAN
    if request.topic_partitions is None:
        # every partition; only those an election changed are reported (in a cluster)
        results = []
        for t in list(catalogue):
            elected = []
            if ctx.broker.cluster.multi:
                for p in range(t.num_partitions):
                    result = _elect(ctx, catalogue, t.name, p, unclean)
                    if result.error_code == ErrorCode.NONE:
                        elected.append(result)
            results.append(ReplicaElectionResult(topic=t.name, partition_result=elected))
    else:
        results = [ReplicaElectionResult(topic=t.topic, partition_result=[
            _elect(ctx, catalogue, t.topic, p, unclean) for p in t.partitions])
            for t in request.topic_partitions]
    return ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=results)


HANDLER = Handler(API, "0-2", elect_leaders)
