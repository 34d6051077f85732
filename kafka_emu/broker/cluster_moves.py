"""What moves in a cluster: partition leaders, group coordinators, brokers stopping and starting.

Theory of operation. ``broker/cluster.py`` holds who leads what; this module changes it the way
a Kafka controller does, and carries out what follows on the brokers:

- ``move_leader(topic, partition, to)``: the partition's leader epoch bumps (so a client still
  sending the old epoch gets FENCED_LEADER_EPOCH, and any request to the old leader
  NOT_LEADER_OR_FOLLOWER). A node that is not a replica takes the place of the last replica (a
  reassignment in one step; the log is shared, so it is in sync at once).
- Moving the leader of a ``__consumer_offsets`` partition moves the coordinator of every group
  on it, as in Kafka: the old coordinator unloads them (``Coordinator.mark_dead``: parked
  JoinGroups and SyncGroups answered NOT_COORDINATOR, timers stopped), the new one answers
  COORDINATOR_LOAD_IN_PROGRESS for ``emu.coordinator.load.time.ms`` and then serves each group
  reloaded from what Kafka last wrote for it (``Coordinator.load_group``: members, generation
  and assignments kept, session timers restarted). ``move_coordinator(group, to)`` is that move
  for the group's partition. KIP-848 groups are unloaded and loaded too: their state as their
  records hold it (members, epochs, assignments), their timers stopped and restarted.
- ``stop(node)``: its listener closes and its connections drop; it leaves every ISR, and each
  partition it led moves to the next in-sync replica still running (none: no leader, epoch
  bumped, until a replica returns). ``start(node)`` listens again on the same port, rejoins the
  ISRs at once and takes leaderless partitions it holds; leadership does not move back by
  itself (Kafka's auto.leader.rebalance waits up to 5 minutes; ``elect_preferred`` does it now).

Everything here runs on the emulator's trio thread and is synchronous, so every control surface
(Python, HTTP, ctl) can call it; listeners are bound with plain sockets for that reason.
"""

from __future__ import annotations

import logging
import socket
from typing import Any, Callable

import trio

from ..errors import ErrorCode
from .clock import io_now
from .cluster import NO_LEADER, OFFSETS_TOPIC, Node, Placement, offsets_partition_for

log = logging.getLogger("kafka_emu")


class ClusterError(ValueError):
    """A move that cannot be made (unknown node or partition, ...); nothing was changed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class ClusterMoves:
    def __init__(self, broker) -> None:
        self.broker = broker
        self.cluster = broker.cluster
        self.nursery: trio.Nursery | None = None  # the server's, once it serves

    # -- routing with loads that finish on time ----------------------------------------------
    def group_error(self, node_id: int | None, group_id: str) -> ErrorCode | None:
        now = io_now()
        if self.cluster.loading:
            self._finish_due_loads(now)
        return self.cluster.group_error(node_id, group_id, now)

    def owned_filter(self, node_id: int | None) -> Callable[[str], bool]:
        cluster = self.cluster
        nid = cluster.first_node_id if node_id is None else node_id
        return lambda group_id: cluster.coordinator_of(group_id) == nid

    # -- partition leaders -------------------------------------------------------------------
    def _partition(self, topic: str, partition: int) -> tuple[Any, Placement]:
        found = self.broker.topics.catalogue.get(topic)
        if topic == OFFSETS_TOPIC and found is None:
            found = self.cluster.offsets_topic()
        if found is None:
            raise ClusterError(f"unknown topic {topic!r}", 404)
        if not 0 <= partition < len(found.partitions):
            raise ClusterError(f"topic {topic!r} has no partition {partition}", 404)
        return found, self.cluster.placement(found.topic_id, topic, partition)

    def _running(self, node_id: int) -> Node:
        node = self.cluster.nodes.get(node_id)
        if node is None:
            raise ClusterError(f"no broker with node id {node_id} "
                               f"(nodes: {sorted(self.cluster.nodes)})", 404)
        if not node.running:
            raise ClusterError(f"broker {node_id} is stopped")
        return node

    def move_leader(self, topic: str, partition: int, to: int,
                    load_ms: int | None = None) -> dict:
        found, placement = self._partition(topic, partition)
        self._running(to)
        if placement.leader != to:
            if to not in placement.replicas:
                placement.replicas = [to, *placement.replicas[:-1]]
            if to not in placement.isr:
                placement.isr.append(to)
            self._set_leader(found, topic, partition, placement, to, load_ms)
        return describe_placement(topic, partition, placement)

    def move_coordinator(self, group_id: str, to: int, load_ms: int | None = None) -> dict:
        partition = self.cluster.offsets_partition(group_id)
        moved = self.move_leader(OFFSETS_TOPIC, partition, to, load_ms)
        return {"group_id": group_id, "coordinator": to, **moved}

    def _set_leader(self, found, topic: str, partition: int, placement: Placement,
                    leader: int, load_ms: int | None = None) -> None:
        placement.leader = leader
        placement.leader_epoch += 1
        found.partitions[partition].become_leader(placement.leader_epoch)
        if topic == OFFSETS_TOPIC:
            self._coordinator_moved(partition, leader, load_ms)
        share = self.broker.__dict__.get("share_fetching")  # only once share groups fetched
        if share is not None:  # the new leader loads its share-partitions (KIP-932)
            share.leader_changed(found.topic_id, partition)

    # -- coordinators --------------------------------------------------------------------------
    def _groups_on(self, partition: int) -> list[str]:
        count = len(self.cluster.offsets_topic().partitions)
        return [gid for gid in self.broker.coordinator.all_group_ids()
                if offsets_partition_for(gid, count) == partition]

    def _coordinator_moved(self, partition: int, leader: int, load_ms: int | None) -> None:
        broker = self.broker
        now = broker.now_ms()
        for gid in self._groups_on(partition):
            broker.route(broker.coordinator.mark_dead(gid, now))
        broker.timers_changed.set()
        self.cluster.loading.pop(partition, None)
        if leader == NO_LEADER:
            return  # the groups stay unloaded until a replica leads again
        wait = self.cluster.config.coordinator_load_time_ms if load_ms is None else load_ms
        if wait <= 0:
            self._finish_load(partition)
            return
        deadline = io_now() + wait / 1000  # wall time, as reading a log is, whatever the clock
        self.cluster.loading[partition] = deadline
        if self.nursery is not None:
            self.nursery.start_soon(self._load_at, partition, deadline)

    async def _load_at(self, partition: int, deadline: float) -> None:
        await trio.sleep_until(deadline)
        if self.cluster.loading.get(partition) == deadline:
            try:
                self._finish_load(partition)
            except Exception as exc:  # noqa: BLE001 - a bug: recorded; the others keep serving
                # (this task runs in the server's own nursery: an error out of it would end
                # the emulator's loop, every broker and connection with it)
                log.exception("internal error loading the groups of __consumer_offsets-%d",
                              partition)
                self.broker.record_unexpected(exc)

    def _finish_due_loads(self, now: float) -> None:
        for partition, ends in list(self.cluster.loading.items()):
            if now >= ends:
                self._finish_load(partition)

    def _finish_load(self, partition: int) -> None:
        broker = self.broker
        self.cluster.loading.pop(partition, None)
        now = broker.now_ms()
        for gid in self._groups_on(partition):
            broker.route(broker.coordinator.load_group(gid, now))
        broker.timers_changed.set()

    # -- brokers -------------------------------------------------------------------------------
    def serve_node(self, node: Node, listeners: list) -> None:
        """Accept connections for ``node`` on ``listeners`` until it is stopped."""
        from .server import accept_loop
        scope = trio.CancelScope()
        node.scope = scope
        node.listeners = listeners
        node.running = True
        broker = self.broker

        async def run() -> None:
            try:
                with scope:
                    async with trio.open_nursery() as connections:
                        for listener in listeners:
                            connections.start_soon(accept_loop, broker, listener, connections,
                                                   node.node_id)
                        await trio.sleep_forever()
            except Exception as exc:  # noqa: BLE001 - a bug: this broker stops accepting,
                # the others serve on (connections record their own errors; this is the
                # accept loop's, out of the server's own nursery it would end the whole loop)
                log.exception("internal error serving broker %d; it accepts no more "
                              "connections", node.node_id)
                broker.record_unexpected(exc)
            finally:
                with trio.CancelScope(shield=True):
                    for listener in listeners:
                        await listener.aclose()
        assert self.nursery is not None
        self.nursery.start_soon(run)

    def stop(self, node_id: int) -> dict:
        node = self._running(node_id)
        node.running = False
        if node.scope is not None:
            node.scope.cancel()  # its tasks end: every connection to it drops
        for listener in node.listeners:
            # closed now rather than when its task next runs, so the port is free at once
            # (a start right after a stop binds it again); the cancel above has already
            # withdrawn the accept that waited on it
            listener.socket.close()
        catalogue = self.broker.topics.catalogue
        for (topic_id, partition), placement in list(self.cluster.all_placements()):
            if node_id in placement.isr and len(placement.isr) > 1:
                placement.isr.remove(node_id)
            if placement.leader == node_id:
                found = catalogue.get_by_id(topic_id)
                if found is None:
                    continue
                successor = next((r for r in placement.isr
                                  if r != node_id and self.cluster.nodes[r].running), NO_LEADER)
                self._set_leader(found, found.name, partition, placement, successor)
        log.info("broker %d stopped", node_id)
        return describe_node(node)

    def start(self, node_id: int) -> dict:
        node = self.cluster.nodes.get(node_id)
        if node is None:
            raise ClusterError(f"no broker with node id {node_id}", 404)
        if node.running:
            raise ClusterError(f"broker {node_id} is running")
        try:
            listeners = [_listen(family, addr) for family, addr in node.sockaddrs]
        except OSError as exc:
            raise ClusterError(f"cannot listen again on port {node.port}: {exc.strerror}",
                               409) from None
        self.serve_node(node, listeners)
        catalogue = self.broker.topics.catalogue
        for (topic_id, partition), placement in list(self.cluster.all_placements()):
            if node_id not in placement.replicas:
                continue
            if node_id not in placement.isr:
                placement.isr.append(node_id)
            if placement.leader == NO_LEADER:
                found = catalogue.get_by_id(topic_id)
                if found is not None:
                    self._set_leader(found, found.name, partition, placement, node_id)
        log.info("broker %d started on port %d", node_id, node.port)
        return describe_node(node)

    def elect(self, topic, partition: int, unclean: bool) -> ErrorCode:
        """One partition's election as the controller runs it for ElectLeaders: preferred moves
        leadership to the first replica if it runs and is in sync; unclean picks a running
        replica only for a leaderless partition."""
        placement = self.cluster.placement(topic.topic_id, topic.name, partition)
        nodes = self.cluster.nodes
        if unclean:
            if placement.leader != NO_LEADER:
                return ErrorCode.ELECTION_NOT_NEEDED
            chosen = next((r for r in placement.replicas if nodes[r].running), NO_LEADER)
            if chosen == NO_LEADER:
                return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
        else:
            chosen = placement.replicas[0]
            if placement.leader == chosen:
                return ErrorCode.ELECTION_NOT_NEEDED
            if not nodes[chosen].running or chosen not in placement.isr:
                return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        if chosen not in placement.isr:
            placement.isr.append(chosen)
        self._set_leader(topic, topic.name, partition, placement, chosen)
        return ErrorCode.NONE

    def elect_preferred(self) -> int:
        """Move every partition's leadership to its first replica if that one runs (Kafka's
        preferred leader election); returns how many moved."""
        moved = 0
        catalogue = self.broker.topics.catalogue
        for (topic_id, partition), placement in list(self.cluster.all_placements()):
            preferred = placement.replicas[0]
            if placement.leader != preferred and self.cluster.nodes[preferred].running \
                    and preferred in placement.isr:
                found = catalogue.get_by_id(topic_id)
                if found is not None:
                    self._set_leader(found, found.name, partition, placement, preferred)
                    moved += 1
        return moved


def _listen(family: int, addr) -> trio.SocketListener:
    """A listening socket on a known address, bound synchronously (trio's bind is async)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock))


def describe_node(node: Node) -> dict:
    return {"node_id": node.node_id, "port": node.port, "rack": node.rack,
            "running": node.running}


def describe_placement(topic: str, partition: int, placement: Placement) -> dict:
    return {"topic": topic, "partition": partition, "leader": placement.leader,
            "leader_epoch": placement.leader_epoch, "replicas": list(placement.replicas),
            "isr": list(placement.isr)}
