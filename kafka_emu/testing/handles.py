"""The handles a runner gives back: :class:`Emulator` (any thread, every method blocks until
done) and :class:`AsyncEmulator` (inside the emulator's own trio program, every method awaited).

Every method both offer is declared once, on their shared base, with ``handle_method``
(``methods.py``): the declaration says what runs on the emulator's trio thread and what it
returns, and each handle runs it its own way. The control methods (time, group operations,
timeline, waiters, faults, the cluster) run the control plane's operations
(``kafka_emu.control.operations``): the same code, the same validation and the same JSON-able
answers as over HTTP and ``kafka-emu ctl``, typed by the results each operation declares
(``kafka_emu.control.results``). Bad input raises ``ControlError`` (with an HTTP-like
``.status``) and changes nothing.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from .. import coordinator as c
from ..broker.config import BrokerConfig
from ..broker.server import BoundAddress
from ..control import results as r
from ..control.operations import ControlError, all_operations, check_bounds, parse_params
from ..control.ops import cluster as cluster_ops
from ..control.ops import faults as fault_ops
from ..control.ops import groups as group_ops
from ..control.ops import share as share_ops
from ..control.ops import time as time_ops
from ..control.ops import timeline as timeline_ops
from ..control.ops import topics as topic_ops
from ..control.plane import control_of
from ..control.waiters import RECHECK_S, WaitTimeout, check_wait, last_seen
from .methods import Job, async_op, handle_method, on_broker, op

if TYPE_CHECKING:
    from ..coordinator.consumer.commands import DescribedConsumerGroup
    from ..coordinator.share.commands import DescribedShareGroup
    from ..coordinator.results import DescribedGroup, ListedGroup

__all__ = ["AsyncEmulator", "Emulator"]

T = TypeVar("T")


class _Handle:
    """What both handles offer; each method's docstring says what it returns (in
    :class:`AsyncEmulator`, when awaited)."""

    _awaited = False  # AsyncEmulator: every handle_method is awaited

    def __init__(self, bound: BoundAddress, config: BrokerConfig, *, control: Any = None) -> None:
        self._bound = bound
        # the HTTP control endpoint's base URL (http://host:port), if one was asked for
        self.control_url: str | None = None if control is None else control.url
        # the token every control request must carry (``Authorization: Bearer <token>``)
        self.control_token: str | None = (None if control is None
                                          else getattr(control, "token", None))
        self.config = config
        self.host = bound.host
        self.port = bound.port

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's bootstrap setting (IPv6 in brackets: ``[::1]:port``);
        with several brokers every one, comma-separated."""
        return str(self._bound.bootstrap)

    @property
    def listeners(self) -> dict[str, str]:
        """Every listener's bootstrap by listener name (``emu.listeners["SASL_SSL"]``); one
        PLAINTEXT listener unless the ``listeners`` config names others."""
        return {name: bootstrap for name, _, bootstrap in self._bound.listeners}

    @property
    def ca_file(self) -> str | None:
        """The CA certificate (PEM) a client trusts for the SSL and SASL_SSL listeners: the one
        generated at start, or ssl.truststore.location when a keystore was given; None without
        a TLS listener."""
        tls = self._bound.tls
        return None if tls is None else tls.ca_file

    @property
    def tls(self) -> Any:
        """The TLS material (kafka_emu.security.tls.TlsMaterial) of the SSL and SASL_SSL
        listeners, None without one: ``ca_file``, ``cert_file``, ``key_file``, and
        ``client_certificate("CN=alice,O=acme") -> (certificate file, key file)`` issued by the
        generated CA for mTLS (the connection's principal is then ``User:CN=alice,O=acme``)."""
        return self._bound.tls

    @property
    def broker(self) -> Any:
        """The live broker state (only safe to touch from the emulator's own trio thread)."""
        return self._bound.broker

    def _execute(self, job: Job[Any]) -> Any:
        raise NotImplementedError

    # The handles' earlier helpers, kept for methods written against them: each returns the
    # value (Emulator) or an awaitable of it (AsyncEmulator), typed Any. New methods are
    # declared with @handle_method and op(...), which type them by the operation's result.
    def _op(self, name: str, **params: Any) -> Any:
        operation = all_operations()[name]
        parsed = parse_params(operation, params)
        return self._execute(Job(lambda broker: operation.run(broker, parsed),
                                 is_async=operation.is_async))

    def _run(self, fn: Callable[[], Any]) -> Any:
        return self._execute(Job(lambda broker: fn()))

    # -- a cluster in one process (broker/cluster_moves.py; control/ops/cluster.py) -----------
    @handle_method
    def brokers(self) -> Job[list[r.BrokerInfo]]:
        """Every broker: {"node_id", "port", "rack", "running"}."""
        return op(cluster_ops.list_brokers)

    @handle_method
    def stop_broker(self, node_id: int) -> Job[r.BrokerInfo]:
        """Stop a broker: listener closed, connections dropped, unlisted in Metadata; the
        partitions it led and the groups it coordinated move to other replicas."""
        return op(cluster_ops.stop_broker, node_id=node_id)

    @handle_method
    def start_broker(self, node_id: int) -> Job[r.BrokerInfo]:
        """Start a stopped broker again (same node id and port)."""
        return op(cluster_ops.start_broker, node_id=node_id)

    @handle_method
    def partition(self, topic: str, partition: int) -> Job[r.PartitionInfo]:
        """{"leader", "leader_epoch", "replicas", "isr", ...} of one partition."""
        return op(cluster_ops.describe_partition, topic=topic, partition=partition)

    @handle_method
    def move_leader(self, topic: str, partition: int, to: int) -> Job[r.PartitionInfo]:
        """Make broker ``to`` lead the partition (its leader epoch bumps)."""
        return op(cluster_ops.move_leader, topic=topic, partition=partition, to=to)

    @handle_method
    def coordinator_of(self, group_id: str) -> Job[int]:
        """The node id coordinating the group."""
        return op(cluster_ops.group_coordinator, group_id=group_id).then(
            lambda found: found["coordinator"])

    @handle_method
    def move_coordinator(self, group_id: str, to: int, *,
                         load_ms: int | None = None) -> Job[r.CoordinatorMoved]:
        """Move the group's coordinator to broker ``to`` (with every group on the same
        __consumer_offsets partition): NOT_COORDINATOR from the old one, LOAD_IN_PROGRESS from
        the new one for ``load_ms`` (default emu.coordinator.load.time.ms), then the group is
        served as Kafka reloads it."""
        return op(cluster_ops.move_coordinator, group_id=group_id, to=to, load_ms=load_ms)

    @handle_method
    def elect_preferred_leaders(self) -> Job[int]:
        """Move leadership back to each partition's first replica; returns how many moved."""
        return op(cluster_ops.elect_preferred_leaders).then(lambda elected: elected["moved"])

    # -- groups as coordinator values (these never wait) ------------------------------------
    @handle_method
    def list_groups(self, states: str | Iterable[str] = (),
                    types: str | Iterable[str] = ()) -> Job[tuple[ListedGroup, ...]]:
        """ListGroups as values: a tuple of ListedGroup(group_id, protocol_type, state, ...).

        ``states`` / ``types`` filter as KIP-518 / KIP-848 do (any case): a tuple of names, or
        one name as a string (``states="Stable"``). Anything else raises TypeError; a name that
        is no group state or type of Kafka's raises ControlError (400) listing those that are, as
        kafka-consumer-groups.sh refuses an invalid --state."""
        states_filter, types_filter = filter_names("states", states), filter_names("types", types)
        known_names("states", states_filter, GROUP_STATES)
        known_names("types", types_filter, GROUP_TYPES)

        def run(b: Any) -> tuple[ListedGroup, ...]:
            cmd = c.ListGroups(request_id=b.new_request_id(), states_filter=states_filter,
                               types_filter=types_filter)
            return tuple(b.query(cmd).groups)
        return on_broker(run)

    @handle_method
    def describe_group(self, group_id: str) -> Job[DescribedGroup]:
        """DescribeGroups for one group as a value (state "Dead" if it does not exist)."""
        def run(b: Any) -> DescribedGroup:
            cmd = c.DescribeGroups(request_id=b.new_request_id(), group_ids=(group_id,),
                                   not_found_is_error=False)
            group: DescribedGroup = b.query(cmd).groups[0]
            return group
        return on_broker(run)

    @handle_method
    def describe_consumer_group(self, group_id: str) -> Job[DescribedConsumerGroup]:
        """ConsumerGroupDescribe (KIP-848) for one group as a value: epochs, state, and per member
        its epoch and (topic, partitions) assignment and target."""
        from ..coordinator.consumer import ConsumerGroupDescribe

        def run(b: Any) -> DescribedConsumerGroup:
            cmd = ConsumerGroupDescribe(request_id=b.new_request_id(), group_ids=(group_id,))
            group: DescribedConsumerGroup = b.query(cmd).groups[0]
            return group
        return on_broker(run)

    @handle_method
    def describe_share_group(self, group_id: str) -> Job[DescribedShareGroup]:
        """ShareGroupDescribe (KIP-932) for one group as a value: state, epochs, the assignor and
        per member its epoch, subscription and (topic, partitions) assignment."""
        from ..coordinator.share.commands import ShareGroupDescribe

        def run(b: Any) -> DescribedShareGroup:
            cmd = ShareGroupDescribe(request_id=b.new_request_id(), group_ids=(group_id,))
            group: DescribedShareGroup = b.query(cmd).groups[0]
            return group
        return on_broker(run)

    @handle_method
    def create_topic(self, name: str, partitions: int = 1,
                     replication_factor: int | None = None) -> Job[None]:
        """Create a topic; in a cluster ``replication_factor`` (at most the number of running
        brokers; default default.replication.factor) places that many replicas per partition.
        Internal topics and partition counts out of 1..9999 are refused as over HTTP
        (ControlError, 400)."""
        topic_ops.refuse_internal(name)
        check_bounds("partitions", partitions, 1, topic_ops.MAX_PARTITIONS)

        def run(broker: Any) -> None:
            live = len(broker.cluster.live_nodes())
            if replication_factor is not None and not 1 <= replication_factor <= live:
                raise ValueError(f"replication factor {replication_factor} is not between 1 "
                                 f"and the {live} running brokers")
            info = broker.topics.create(name, partitions)
            if replication_factor is not None:
                broker.cluster.replication[info.topic_id] = replication_factor
        return on_broker(run)

    @handle_method
    def reset(self) -> Job[tuple[str, ...]]:
        """Back to the configured start between tests sharing this emulator: delete every topic
        (with its log and committed offsets) and every group that has no members, clear fault
        rules, and create the configured topics again. Returns the ids of the groups that stay
        because members are still joined (clients that were not closed)."""
        topics = self.config.topics

        def run(b: Any) -> tuple[str, ...]:
            for topic in list(b.topics.all()):
                b.delete_topic(topic.name)
            listed = b.query(c.ListGroups(request_id=b.new_request_id(), states_filter=(),
                                          types_filter=())).groups
            ops = all_operations()
            kept = []
            for group in listed:  # the control plane's delete_group: Empty groups only
                try:
                    ops["delete_group"].run(b, parse_params(ops["delete_group"],
                                                            {"group_id": group.group_id}))
                except ControlError:
                    kept.append(group.group_id)
            ops["clear_faults"].run(b, parse_params(ops["clear_faults"], {}))
            for name, partitions in topics:
                b.topics.create(name, partitions)
            return tuple(kept)
        return on_broker(run)

    # -- time -------------------------------------------------------------------------------
    @handle_method
    def advance(self, ms: int) -> Job[r.Advanced]:
        """Move the coordinator's time forward by ``ms``: every timer that falls due fires, in
        deadline order, as if the time had passed. Returns what happened: ``members_expired``,
        ``members_removed``, ``rebalances_started``, ``generations``, ``groups_deleted`` and
        every ``events`` entry, plus ``from_ms``/``now_ms``, and ``logs_trimmed``: the partitions
        a log retention run deleted batches from."""
        return op(time_ops.advance, ms=ms)

    @handle_method
    def advance_to_next_deadline(self, group_id: str | None = None,
                                 kind: r.DeadlineKind | None = None) -> Job[r.AdvancedToDeadline]:
        """Move time to the earliest pending timer (of ``group_id``, of ``kind``: session,
        new_member, pending_member, rebalance, initial_delay, pending_sync, retention, or
        log_retention: the next log retention run, only by that kind) and fire it; returns what
        happened (as ``advance``) and the ``deadline``. 404 if none matches."""
        return op(time_ops.advance_to_next_deadline, group_id=group_id, kind=kind)

    @handle_method
    def deadlines(self, group_id: str | None = None,
                  kind: r.DeadlineKind | None = None) -> Job[list[r.Deadline]]:
        """Pending timers, earliest first: deadline_ms, in_ms, kind, group_id, member_id."""
        return op(time_ops.deadlines, group_id=group_id, kind=kind)

    @handle_method
    def clock(self) -> Job[r.Clock]:
        """The coordinator's clock: now_ms, mode ("real" or "manual"), advanced_ms."""
        return op(time_ops.clock)

    # -- group operations -------------------------------------------------------------------
    @handle_method
    def groups(self) -> Job[list[r.GroupSummary]]:
        """Every group: group_id, type, state, protocol_type, generation, members (a count)."""
        return op(group_ops.groups_list)

    @handle_method
    def group_view(self, group_id: str) -> Job[r.GroupView]:
        """State, generation, protocol, leader, members with decoded ``subscription`` and
        ``assignment``, and ``offsets`` (committed_offset, log_end_offset, lag, member_id per
        partition) with ``total_lag``. 404 if the group does not exist. Classic, consumer
        (KIP-848: ``group_epoch``, ``assignment_epoch``, per member ``member_epoch``,
        ``member_state``, ``target_assignment``, ``pending_revocation``) and share groups (per
        partition the share-partition's ``start_offset``); ``type`` says which."""
        return op(group_ops.group_view, group_id=group_id)

    @handle_method
    def share_partitions(self, group_id: str) -> Job[list[share_ops.SharePartitionView]]:
        """A share group's share-partitions: start/end offsets and each in-flight record's
        state, delivery count, holder and lock deadline. 404 if it has none."""
        return op(share_ops.share_partitions, group_id=group_id)

    @handle_method
    def expire_share_locks(self, group_id: str, member_id: str | None = None
                           ) -> Job[share_ops.LocksExpired]:
        """Let a share group's acquisition locks (one member's, if named) run out now: the
        records become AVAILABLE again, or ARCHIVED at the delivery count limit."""
        return op(share_ops.expire_share_locks, group_id=group_id, member_id=member_id)

    @handle_method
    def expire_member(self, group_id: str, member_id: str | None = None, *,
                      group_instance_id: str | None = None) -> Job[r.OperatorDone]:
        """Expire a member now, exactly as its session timeout would; returns what happened."""
        return op(group_ops.expire_member, group_id=group_id, member_id=member_id,
                  group_instance_id=group_instance_id)

    @handle_method
    def ignore_heartbeats(self, group_id: str, member_id: str | None = None, *,
                          group_instance_id: str | None = None,
                          ignore: bool = True) -> Job[r.OperatorDone]:
        """Stop honouring a member's heartbeats, so it expires naturally when its session runs
        out (``advance`` gets it there at once); ``ignore=False`` honours them again."""
        return op(group_ops.ignore_heartbeats, group_id=group_id, member_id=member_id,
                  group_instance_id=group_instance_id, ignore=ignore)

    @handle_method
    def trigger_rebalance(self, group_id: str, reason: str | None = None) -> Job[r.OperatorDone]:
        """Start a rebalance of a group that has members."""
        params = {} if reason is None else {"reason": reason}
        return op(group_ops.trigger_rebalance, group_id=group_id, **params)

    @handle_method
    def remove_static_member(self, group_id: str, group_instance_id: str,
                             reason: str | None = None) -> Job[r.OperatorDone]:
        """Remove a static member as KIP-345's admin removal does."""
        return op(group_ops.remove_static_member, group_id=group_id,
                  group_instance_id=group_instance_id, reason=reason)

    @handle_method
    def delete_group(self, group_id: str, *, force: bool = False) -> Job[r.OperatorDone]:
        """Delete a group and its offsets: an Empty one, or with ``force`` any group (its
        members removed first)."""
        return op(group_ops.delete_group, group_id=group_id, force=force)

    @handle_method
    def committed_offsets(self, group_id: str) -> Job[list[r.PartitionOffsets]]:
        """Committed offsets with log-end offsets and lag (kafka-consumer-groups --describe), of
        a classic or consumer group; of a share group its share-partitions' start offsets."""
        return op(group_ops.committed_offsets, group_id=group_id)

    @handle_method
    def set_offsets(self, group_id: str,
                    offsets: Mapping[tuple[str, int], int]) -> Job[r.OffsetsSet]:
        """Commit offsets as an administrator: ``{("orders", 0): 42, ...}``, in any group state
        (an unknown group is created Empty)."""
        items = [{"topic": t, "partition": p, "offset": o} for (t, p), o in offsets.items()]
        return op(group_ops.set_offsets, group_id=group_id, offsets=items)

    # -- timeline and waiters ---------------------------------------------------------------
    @handle_method
    def timeline(self, group_id: str | None = None, since: int | None = None,
                 types: Iterable[str] = (), limit: int | None = None) -> Job[list[r.Event]]:
        """Recorded events, oldest first, as dicts with ``seq`` and ``type`` (the event class:
        RequestHandled, MemberRemoved, TimeAdvanced, ...) and that event's fields; ``since``
        is a sequence number."""
        return op(timeline_ops.timeline, group_id=group_id, since=since,
                  types=tuple(filter_names("types", types)), limit=limit)

    @handle_method
    def requests(self, api: str | None = None, client_id: str | None = None,
                 group_id: str | None = None, since: int | None = None,
                 limit: int | None = None) -> Job[list[r.Event]]:
        """Recorded requests (RequestHandled events), oldest first, filtered."""
        return op(timeline_ops.requests, api=api, client_id=client_id, group_id=group_id,
                  since=since, limit=limit)

    @handle_method
    def timeline_seq(self) -> Job[int]:
        """The sequence number of the newest event so far (pass it as ``since`` later)."""
        return on_broker(lambda broker: int(control_of(broker).timeline.seq))

    @handle_method
    def wait_for_group(self, group_id: str, state: str | None = "Stable",
                       members: int | None = None, timeout: float = 30.0) -> Job[r.GroupView]:
        """Block until the group is in ``state`` with ``members`` members (None: any), woken by
        events; returns the group view. Any group type: a consumer group's states are Empty,
        Assigning, Reconciling, Stable and Dead. ``WaitTimeout`` (a TimeoutError) after ``timeout`` s."""
        return async_op(timeline_ops.wait_for_group, group_id=group_id, state=state,
                        members=members, timeout=timeout)

    # -- faults (control/faults.py; the operations of control/ops/faults.py) ------------------
    @handle_method
    def add_fault(self, action: str, *, api: str | int | None = None,
                  min_version: int | None = None, max_version: int | None = None,
                  client_id: str | None = None, group_id: str | None = None,
                  member_id: str | None = None, topic: str | None = None,
                  principal: str | None = None, listener: str | None = None,
                  error: str | int | None = None, message: str | None = None,
                  delay_ms: int | None = None, throttle_ms: int | None = None,
                  count: int | None = None, always: bool = False, skip: int = 0,
                  probability: float | None = None, seed: int | None = None) -> Job[int]:
        """Add a fault rule (see control/faults.py); returns its id. E.g.
        ``emu.add_fault("error", api="OffsetCommit", group_id="g", error="REBALANCE_IN_PROGRESS")``.
        ``count`` defaults to 1 (and contradicts ``always``); ``seed`` goes with ``probability``.
        Bad input raises ControlError and adds nothing."""
        rule = dict(action=action, api=api, min_version=min_version, max_version=max_version,
                    client_id=client_id, group_id=group_id, member_id=member_id, topic=topic,
                    principal=principal, listener=listener, error=error, message=message, delay_ms=delay_ms, throttle_ms=throttle_ms,
                    count=count, always=always, skip=skip, probability=probability, seed=seed)
        return op(fault_ops.add_fault, **{k: v for k, v in rule.items() if v is not None}).then(
            lambda added: added["id"])

    @handle_method
    def faults(self) -> Job[list[r.FaultRule]]:
        """The fault rules, in the order they apply, with how often each matched and fired."""
        return op(fault_ops.list_faults)

    @handle_method
    def remove_fault(self, rule_id: int) -> Job[r.FaultRule]:
        """Remove one fault rule (ControlError, status 404, if there is none with that id)."""
        return op(fault_ops.remove_fault, rule_id=rule_id)

    @handle_method
    def clear_faults(self) -> Job[int]:
        """Remove every fault rule; returns how many there were."""
        return op(fault_ops.clear_faults).then(lambda cleared: cleared["removed"])

    @handle_method
    def unexpected_errors(self) -> Job[list[BaseException]]:
        """Exceptions the server hit that are bugs in kafka-emu (the fixtures fail the test with
        them at teardown); empty when all is well."""
        return on_broker(lambda broker: list(broker.unexpected))


class Emulator(_Handle):
    """A running emulator, driven from any thread: every method blocks until done."""

    def __init__(self, bound: BoundAddress, config: BrokerConfig,
                 call: Callable[[Callable[[], Any]], Any],
                 acall: Callable[[Callable[[], Awaitable[Any]]], Any], *,
                 control: Any = None) -> None:
        super().__init__(bound, config, control=control)
        self._call = call  # runs a function on the emulator's trio thread
        self._acall = acall  # runs an async function there and waits for it

    def _execute(self, job: Job[T]) -> T:
        broker = self._bound.broker
        if job.is_async:
            return self._acall(partial(job.run, broker))  # type: ignore[no-any-return]
        return self._call(partial(job.run, broker))  # type: ignore[no-any-return]

    def wait_for(self, predicate: Callable[[], T], timeout: float = 30.0, *,
                 interval: float = RECHECK_S) -> T:
        """Call ``predicate()`` (in this thread: it may use this emulator and any client) now,
        again after each new event the emulator records and at least every ``interval`` seconds
        (a predicate that polls a client drives it), until it returns something truthy, which is
        returned. ``WaitTimeout`` after ``timeout`` seconds, saying what the predicate last
        returned and what the emulator last saw."""
        check_wait(timeout, interval)
        broker = self._bound.broker
        timeline = self._call(lambda: control_of(broker).timeline)
        deadline = time.monotonic() + timeout
        self._call(timeline.hold)
        try:
            start = seq = self._call(lambda: timeline.seq)
            while True:
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = self._call(partial(last_seen, broker, start))
                    raise WaitTimeout(timed_out(predicate, timeout, result, seen))
                seq = self._acall(partial(timeline.wait_after, seq, min(remaining, interval)))
        finally:
            self._call(timeline.release)


class AsyncEmulator(_Handle):
    """A running emulator in the caller's trio program: every method is awaitable."""

    _awaited = True

    async def _execute(self, job: Job[T]) -> T:
        result = job.run(self._bound.broker)
        return (await result) if job.is_async else result  # type: ignore[no-any-return]

    async def wait_for(self, predicate: Callable[[], T | Awaitable[T]],
                       timeout: float = 30.0, *, interval: float = RECHECK_S) -> T:
        """Evaluate ``predicate()`` (a plain or an async function) now, after each new event and
        at least every ``interval`` seconds, until it returns something truthy, which is
        returned; ``WaitTimeout`` after ``timeout`` seconds of wall time, saying what the
        predicate last returned and what the emulator last saw."""
        check_wait(timeout, interval)
        broker = self._bound.broker
        timeline = control_of(broker).timeline
        deadline = trio.current_time() + timeout
        timeline.hold()
        try:
            start = timeline.seq
            while True:
                seq = timeline.seq
                result = predicate()
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return result
                remaining = deadline - trio.current_time()
                if remaining <= 0:
                    raise WaitTimeout(timed_out(predicate, timeout, result,
                                                last_seen(broker, start)))
                await timeline.wait_after(seq, min(remaining, interval))
        finally:
            timeline.release()


def timed_out(predicate: Callable[..., Any], timeout: float, result: Any, seen: str) -> str:
    """A ``wait_for`` timeout message: the predicate, what it last returned, what was seen."""
    name = getattr(predicate, "__qualname__", None) or getattr(predicate, "__name__", None)
    returned = repr(result)
    if len(returned) > 80:
        returned = returned[:77] + "..."
    return (f"timed out after {timeout:g} s waiting for {name or repr(predicate)} (it last "
            f"returned {returned}); {seen}")


# Kafka's GroupState and GroupType names (KIP-518, KIP-848): what a ListGroups filter can match
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling", "NotReady", "Unknown")
GROUP_TYPES = ("classic", "consumer", "share", "streams")


def known_names(what: str, names: tuple[str, ...], known: tuple[str, ...]) -> None:
    """ControlError (400) unless every name is one of ``known`` (any case)."""
    lowered = {k.lower() for k in known}
    unknown = [n for n in names if n.strip().lower() not in lowered]
    if unknown:
        raise ControlError(f"{what}: unknown {', '.join(map(repr, unknown))} (known: "
                           f"{', '.join(known)})")


def filter_names(what: str, value: str | Iterable[str]) -> tuple[str, ...]:
    """A filter argument as a tuple: one string is one name (not its characters)."""
    if isinstance(value, str):
        return (value,)
    try:
        names = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be a string or an iterable of strings, "
                        f"not {type(value).__name__}") from None
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} must hold strings, not {type(name).__name__}")
    return names
