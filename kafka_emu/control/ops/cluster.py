"""Cluster operations: list the brokers, stop and start one, move a partition's leader or a
group's coordinator, elect preferred leaders.

What each move does on the wire is described in ``broker/cluster_moves.py``; these operations
are how every surface (Python, HTTP, ``kafka-emu ctl``) reaches it. A move that cannot be made
(unknown node, topic or partition; a broker already stopped) is a ControlError and changes
nothing.
"""

from __future__ import annotations

import attrs

from ...broker.cluster_moves import ClusterError, describe_node, describe_placement
from .. import results as r
from ..operations import INT32_MAX, ControlError, bounded, operation


def _moving(fn, *args):
    try:
        return fn(*args)
    except ClusterError as exc:
        raise ControlError(str(exc), exc.status) from None


@operation("GET", "/brokers")
def list_brokers(broker, params) -> list[r.BrokerInfo]:
    """List the brokers of the cluster: node id, port, rack and whether each is running."""
    return [describe_node(n) for n in broker.cluster.nodes.values()]


@attrs.frozen(kw_only=True)
class NodeParams:
    node_id: int = bounded(0, INT32_MAX, doc="the broker's node id")


@operation("POST", "/brokers/{node_id}/stop", NodeParams)
def stop_broker(broker, params: NodeParams) -> r.BrokerInfo:
    """Stop a broker: its listener closes and its connections drop, Metadata stops listing
    it, and the partitions it led (and so the groups it coordinated) move to other replicas."""
    return _moving(broker.cluster_moves.stop, params.node_id)


@operation("POST", "/brokers/{node_id}/start", NodeParams)
def start_broker(broker, params: NodeParams) -> r.BrokerInfo:
    """Start a stopped broker again on the same node id and port; it rejoins every ISR and
    leads the partitions that had no leader."""
    return _moving(broker.cluster_moves.start, params.node_id)


@attrs.frozen(kw_only=True)
class PartitionParams:
    topic: str = attrs.field(metadata={"doc": "the topic"})
    partition: int = bounded(0, INT32_MAX, doc="the partition index")


@operation("GET", "/partitions/{topic}/{partition}", PartitionParams)
def describe_partition(broker, params: PartitionParams) -> r.PartitionInfo:
    """A partition's leader, leader epoch, replicas and in-sync replicas."""
    found, placement = _moving(broker.cluster_moves._partition, params.topic, params.partition)
    return describe_placement(params.topic, params.partition, placement)


@attrs.frozen(kw_only=True)
class MoveLeaderParams:
    topic: str = attrs.field(metadata={"doc": "the topic"})
    partition: int = bounded(0, INT32_MAX, doc="the partition index")
    to: int = bounded(0, INT32_MAX, doc="node id of the new leader (a running broker)")


@operation("POST", "/partitions/{topic}/{partition}/move-leader", MoveLeaderParams)
def move_leader(broker, params: MoveLeaderParams) -> r.PartitionInfo:
    """Make another broker lead a partition: its leader epoch bumps, the old leader answers
    NOT_LEADER_OR_FOLLOWER and a stale epoch gets FENCED_LEADER_EPOCH."""
    return _moving(broker.cluster_moves.move_leader, params.topic, params.partition, params.to)


@attrs.frozen(kw_only=True)
class GroupParams:
    group_id: str = attrs.field(metadata={"doc": "the group id"})


@operation("GET", "/groups/{group_id}/coordinator", GroupParams)
def group_coordinator(broker, params: GroupParams) -> r.CoordinatorInfo:
    """The node id coordinating a group, and its ``__consumer_offsets`` partition."""
    cluster = broker.cluster
    return {"group_id": params.group_id, "coordinator": cluster.coordinator_of(params.group_id),
            "partition": cluster.offsets_partition(params.group_id),
            "loading": cluster.offsets_partition(params.group_id) in cluster.loading}


@attrs.frozen(kw_only=True)
class MoveCoordinatorParams:
    group_id: str = attrs.field(metadata={"doc": "the group id"})
    to: int = bounded(0, INT32_MAX, doc="node id of the new coordinator (a running broker)")
    load_ms: int | None = bounded(0, INT32_MAX, default=None, doc=(
        "how long it answers COORDINATOR_LOAD_IN_PROGRESS (default: "
        "emu.coordinator.load.time.ms)"))


@operation("POST", "/groups/{group_id}/move-coordinator", MoveCoordinatorParams)
def move_coordinator(broker, params: MoveCoordinatorParams) -> r.CoordinatorMoved:
    """Move a group's coordinator (the leader of its __consumer_offsets partition, so every
    group on that partition moves): the old one answers NOT_COORDINATOR, the new one
    COORDINATOR_LOAD_IN_PROGRESS for the load time, then serves the group reloaded."""
    return _moving(broker.cluster_moves.move_coordinator, params.group_id, params.to,
                   params.load_ms)


@operation("POST", "/brokers/elect-preferred-leaders")
def elect_preferred_leaders(broker, params) -> r.LeadersElected:
    """Move every partition's leadership back to its first replica where that one runs."""
    return {"moved": broker.cluster_moves.elect_preferred()}
