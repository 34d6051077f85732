"""A cluster in one process: which broker leads each partition and coordinates each group.

Theory of operation. Several brokers are one process with one listener each, sharing one
``Broker`` state (one log, one group coordinator); a broker's identity is data -- a ``Node``
with its node id, port, rack and whether it is running. Every connection knows the node it
reached (``ConnectionInfo.node_id``), and handlers ask this module the routing questions a
real broker answers from its metadata cache:

- ``placement(topic_id, partition)``: replicas, in-sync replicas, leader and leader epoch,
  decided on first need with Kafka's rack-unaware spread (replica i of partition p is node
  ``(start + p + i) % n`` of the running nodes in id order; ``start`` is the topic name's Java
  hash where Kafka draws a random number, so runs repeat);
- ``partition_error(node, ...)``: FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a stale or
  future epoch, NOT_LEADER_OR_FOLLOWER when the node does not lead the partition -- in Kafka's
  order (``Partition.localLogWithEpochOrThrow``);
- ``coordinator_of(group_id)``: the leader of the group's ``__consumer_offsets`` partition
  (``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``), and ``group_error``:
  NOT_COORDINATOR from any other node, COORDINATOR_LOAD_IN_PROGRESS while that partition loads.

With one broker (the default) ``multi`` is False and handlers skip every check, so the single
broker's hot path costs one attribute read. The moves (leader moves, coordinator moves, broker
stops and starts) are in ``broker/cluster_moves.py``.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..coordinator.java_order import string_hash
from ..errors import ErrorCode
from .config import BrokerConfig

OFFSETS_TOPIC = "__consumer_offsets"
NO_LEADER = -1
# Kafka's transaction.state.log.replication.factor default (TransactionLogConfig), capped at
# the number of brokers as offsets.topic.replication.factor is: the coordinator of a
# transactional id moves when its broker stops instead of leaving the id without one
TRANSACTION_STATE_TOPIC, TRANSACTION_STATE_REPLICATION = "__transaction_state", 3


@attrs.define(eq=False)
class Node:
    """One broker of the cluster: identity and where it listens."""

    node_id: int
    port: int  # the configured port (0: any free one); the bound one once it has listened
    rack: str | None = None
    running: bool = True
    # set by the server: the listeners' cancel scope and the addresses bound (for a restart)
    scope: Any = attrs.field(default=None, repr=False)
    sockaddrs: list = attrs.field(factory=list, repr=False)
    listeners: list = attrs.field(factory=list, repr=False)
    # listener name -> bound port (every listener of security.listeners, or the one PLAINTEXT)
    ports: dict = attrs.field(factory=dict, repr=False)


@attrs.define(eq=False)
class Placement:
    """Where one partition lives: Kafka's PartitionRegistration, reduced."""

    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0


def java_abs(value: int) -> int:
    """Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE maps to 0 (not to itself)."""
    return 0 if value == -2**31 else abs(value)


def offsets_partition_for(group_id: str, partitions: int) -> int:
    """GroupCoordinator.partitionFor: the group's ``__consumer_offsets`` partition."""
    return java_abs(string_hash(group_id)) % partitions


class Cluster:
    def __init__(self, config: BrokerConfig, topics) -> None:
        self.config = config
        self.topics = topics  # broker/topics.py's façade (the catalogue of logs)
        self.nodes: dict[int, Node] = {nid: Node(nid, port, rack)
                                       for nid, port, rack in config.nodes()}
        self.first_node_id = next(iter(self.nodes))
        self.multi = len(self.nodes) > 1
        self._placements: dict[tuple[Any, int], Placement] = {}
        self.replication: dict[Any, int] = {}  # topic id -> factor asked at creation
        # __consumer_offsets partition -> when its load ends (trio's clock, wall time)
        self.loading: dict[int, float] = {}

    # -- nodes ------------------------------------------------------------------------------
    def live_nodes(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.running]

    def node(self, node_id: int | None) -> Node:
        """The node a connection reached (None: not from a socket -- the first node)."""
        return self.nodes[self.first_node_id if node_id is None else node_id]

    def controller_id(self) -> int:
        live = self.live_nodes()
        return live[0].node_id if live else NO_LEADER

    # -- partitions -------------------------------------------------------------------------
    def placement(self, topic_id, name: str, partition: int) -> Placement:
        key = (topic_id, partition)
        found = self._placements.get(key)
        if found is None:
            found = self._placements[key] = self._place(topic_id, name, partition)
        return found

    def _place(self, topic_id, name: str, partition: int) -> Placement:
        live = [n.node_id for n in self.live_nodes()] or list(self.nodes)
        if name == OFFSETS_TOPIC:
            factor = self.config.offsets_topic_replication_factor
        elif name == TRANSACTION_STATE_TOPIC:
            factor = TRANSACTION_STATE_REPLICATION
        else:
            factor = self.replication.get(topic_id, self.config.default_replication_factor)
        factor = max(1, min(factor, len(live)))
        start = java_abs(string_hash(name)) if self.multi else 0
        first = (start + partition) % len(live)
        replicas = [live[(first + i) % len(live)] for i in range(factor)]
        running = [r for r in replicas if self.nodes[r].running]
        return Placement(replicas=replicas, isr=running or list(replicas),
                         leader=running[0] if running else NO_LEADER)

    def placements_of(self, topic_id) -> list[tuple[int, Placement]]:
        return [(p, pl) for (tid, p), pl in self._placements.items() if tid == topic_id]

    def all_placements(self):
        return self._placements.items()

    def forget_topic(self, topic_id) -> None:
        for key in [k for k in self._placements if k[0] == topic_id]:
            del self._placements[key]
        self.replication.pop(topic_id, None)

    def partition_error(self, node_id: int | None, topic_id, name: str, partition: int,
                        current_epoch: int = -1) -> ErrorCode | None:
        """Why this node cannot serve the partition as its leader, or None if it can."""
        placement = self.placement(topic_id, name, partition)
        nid = self.first_node_id if node_id is None else node_id
        if nid in placement.replicas and current_epoch >= 0:
            if current_epoch < placement.leader_epoch:
                return ErrorCode.FENCED_LEADER_EPOCH
            if current_epoch > placement.leader_epoch:
                return ErrorCode.UNKNOWN_LEADER_EPOCH
        if placement.leader != nid:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return None

    def check_partition(self, node_id: int | None, name: str, partition: int,
                        current_epoch: int = -1) -> ErrorCode | None:
        """``partition_error`` by topic name; None for partitions that do not exist (the
        handler's own lookup answers UNKNOWN_TOPIC_OR_PARTITION for those)."""
        topic = self.topics.catalogue.get(name)
        if topic is None or not 0 <= partition < len(topic.partitions):
            return None
        return self.partition_error(node_id, topic.topic_id, name, partition, current_epoch)

    def check_partition_id(self, node_id: int | None, topic_id, partition: int,
                           current_epoch: int = -1) -> ErrorCode | None:
        topic = self.topics.catalogue.get_by_id(topic_id)
        if topic is None or not 0 <= partition < len(topic.partitions):
            return None
        return self.partition_error(node_id, topic_id, topic.name, partition, current_epoch)

    # -- groups -----------------------------------------------------------------------------
    def offsets_topic(self):
        """The ``__consumer_offsets`` topic, created on first need as Kafka creates it (on the
        first FindCoordinator): internal, offsets.topic.num.partitions partitions."""
        catalogue = self.topics.catalogue
        topic = catalogue.get(OFFSETS_TOPIC)
        if topic is None:
            topic = catalogue.create_topic(OFFSETS_TOPIC,
                                           self.config.offsets_topic_num_partitions)
        return topic

    def offsets_partition(self, group_id: str) -> int:
        return offsets_partition_for(group_id, len(self.offsets_topic().partitions))

    def coordinator_of(self, group_id: str) -> int:
        """The node id coordinating the group (NO_LEADER when its partition has none)."""
        topic = self.offsets_topic()
        partition = offsets_partition_for(group_id, len(topic.partitions))
        return self.placement(topic.topic_id, OFFSETS_TOPIC, partition).leader

    def group_error(self, node_id: int | None, group_id: str, now: float) -> ErrorCode | None:
        """NOT_COORDINATOR unless this node coordinates the group; COORDINATOR_LOAD_IN_PROGRESS
        while the group's partition loads here."""
        topic = self.offsets_topic()
        partition = offsets_partition_for(group_id, len(topic.partitions))
        placement = self.placement(topic.topic_id, OFFSETS_TOPIC, partition)
        nid = self.first_node_id if node_id is None else node_id
        if placement.leader != nid:
            return ErrorCode.NOT_COORDINATOR
        if self.loading:
            ends = self.loading.get(partition)
            if ends is not None and now < ends:
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None
