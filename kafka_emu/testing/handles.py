"""The handles a runner gives back: :class:`Emulator` (any thread, every method blocks until
done) and :class:`AsyncEmulator` (inside the emulator's own trio program, every method awaited).

The control methods (time, group operations, timeline, waiters, faults) run the control
plane's operations (``kafka_emu.control.operations``): the same code, the same validation and
the same JSON-able answers as over HTTP and ``kafka-emu ctl``. Bad input raises
``ControlError`` (with an HTTP-like ``.status``) and changes nothing.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import trio

from .. import coordinator as c
from ..broker.config import BrokerConfig
from ..broker.server import BoundAddress
from ..control.operations import ControlError, all_operations, parse_params
from ..control.plane import control_of
from ..control.waiters import WaitTimeout

if TYPE_CHECKING:
    from ..coordinator.results import DescribedGroup, ListedGroup

__all__ = ["AsyncEmulator", "Emulator"]


class _Handle:
    """What both handles offer. ``_run(fn)`` runs ``fn`` on the emulator's trio thread and
    ``_op(name, **params)`` runs a control operation; in :class:`Emulator` they return the value,
    in :class:`AsyncEmulator` an awaitable of it. That is why the shared methods are annotated
    ``Any``: their docstrings say what the value is (JSON-like dicts and lists, as over HTTP)."""

    def __init__(self, bound: BoundAddress, config: BrokerConfig, *, control: Any = None) -> None:
        self._bound = bound
        # the HTTP control endpoint's base URL (http://host:port), if one was asked for
        self.control_url: str | None = None if control is None else control.url
        self.config = config
        self.host = bound.host
        self.port = bound.port

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's bootstrap setting (IPv6 in brackets: ``[::1]:port``);
        with several brokers every one, comma-separated."""
        return str(self._bound.bootstrap)

    @property
    def broker(self) -> Any:
        """The live broker state (only safe to touch from the emulator's own trio thread)."""
        return self._bound.broker

    def _run(self, fn: Callable[[], Any]) -> Any:
        raise NotImplementedError

    def _op(self, name: str, **params: Any) -> Any:
        raise NotImplementedError

    # -- a cluster in one process (broker/cluster_moves.py; control/ops/cluster.py) -----------
    def brokers(self) -> Any:
        """Every broker: {"node_id", "port", "rack", "running"}."""
        return self._op("list_brokers")

    def stop_broker(self, node_id: int) -> Any:
        """Stop a broker: listener closed, connections dropped, unlisted in Metadata; the
        partitions it led and the groups it coordinated move to other replicas."""
        return self._op("stop_broker", node_id=node_id)

    def start_broker(self, node_id: int) -> Any:
        """Start a stopped broker again (same node id and port)."""
        return self._op("start_broker", node_id=node_id)

    def partition(self, topic: str, partition: int) -> Any:
        """{"leader", "leader_epoch", "replicas", "isr", ...} of one partition."""
        return self._op("describe_partition", topic=topic, partition=partition)

    def move_leader(self, topic: str, partition: int, to: int) -> Any:
        """Make broker ``to`` lead the partition (its leader epoch bumps)."""
        return self._op("move_leader", topic=topic, partition=partition, to=to)

    def coordinator_of(self, group_id: str) -> Any:
        """The node id coordinating the group."""
        return self._op("group_coordinator", group_id=group_id)["coordinator"]

    def move_coordinator(self, group_id: str, to: int, *, load_ms: int | None = None) -> Any:
        """Move the group's coordinator to broker ``to`` (with every group on the same
        __consumer_offsets partition): NOT_COORDINATOR from the old one, LOAD_IN_PROGRESS from
        the new one for ``load_ms`` (default emu.coordinator.load.time.ms), then the group is
        served as Kafka reloads it."""
        return self._op("move_coordinator", group_id=group_id, to=to, load_ms=load_ms)

    def elect_preferred_leaders(self) -> Any:
        """Move leadership back to each partition's first replica; returns how many moved."""
        return self._op("elect_preferred_leaders")["moved"]

    # -- groups as coordinator values (these never wait) ------------------------------------
    def list_groups(self, states: str | Iterable[str] = (), types: str | Iterable[str] = ()) -> Any:
        """ListGroups as values: a tuple of ListedGroup(group_id, protocol_type, state, ...).

        ``states`` / ``types`` filter as KIP-518 / KIP-848 do (any case): a tuple of names, or
        one name as a string (``states="Stable"``). Anything else raises TypeError."""
        states, types = filter_names("states", states), filter_names("types", types)

        def run() -> Any:
            b = self._bound.broker
            cmd = c.ListGroups(request_id=b.new_request_id(), states_filter=tuple(states),
                               types_filter=tuple(types))
            return b.query(cmd).groups
        return self._run(run)

    def describe_group(self, group_id: str) -> Any:
        """DescribeGroups for one group as a value (state "Dead" if it does not exist)."""
        def run() -> Any:
            b = self._bound.broker
            cmd = c.DescribeGroups(request_id=b.new_request_id(), group_ids=(group_id,),
                                   not_found_is_error=False)
            return b.query(cmd).groups[0]
        return self._run(run)

    def describe_consumer_group(self, group_id: str) -> Any:
        """ConsumerGroupDescribe (KIP-848) for one group as a value: epochs, state, and per member
        its epoch and (topic, partitions) assignment and target."""
        from ..coordinator.consumer import ConsumerGroupDescribe

        def run() -> Any:
            b = self._bound.broker
            cmd = ConsumerGroupDescribe(request_id=b.new_request_id(), group_ids=(group_id,))
            return b.query(cmd).groups[0]
        return self._run(run)

    def create_topic(self, name: str, partitions: int = 1,
                     replication_factor: int | None = None) -> Any:
        """Create a topic; in a cluster ``replication_factor`` (at most the number of running
        brokers; default default.replication.factor) places that many replicas per partition."""
        def run() -> Any:
            broker = self._bound.broker
            live = len(broker.cluster.live_nodes())
            if replication_factor is not None and not 1 <= replication_factor <= live:
                raise ValueError(f"replication factor {replication_factor} is not between 1 "
                                 f"and the {live} running brokers")
            info = broker.topics.create(name, partitions)
            if replication_factor is not None:
                broker.cluster.replication[info.topic_id] = replication_factor
        return self._run(run)

    def reset(self) -> Any:
        """Back to the configured start between tests sharing this emulator: delete every topic
        (with its log and committed offsets) and every group that has no members, clear fault
        rules, and create the configured topics again. Returns the ids of the groups that stay
        because members are still joined (clients that were not closed)."""
        def run() -> tuple[str, ...]:
            b = self._bound.broker
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
            for name, partitions in self.config.topics:
                b.topics.create(name, partitions)
            return tuple(kept)
        return self._run(run)

    # -- time -------------------------------------------------------------------------------
    def advance(self, ms: int) -> Any:
        """Move the coordinator's time forward by ``ms``: every timer that falls due fires, in
        deadline order, as if the time had passed. Returns what happened: ``members_expired``,
        ``members_removed``, ``rebalances_started``, ``generations``, ``groups_deleted`` and
        every ``events`` entry, plus ``from_ms``/``now_ms``, and ``logs_trimmed``: the partitions
        a log retention run deleted batches from."""
        return self._op("advance", ms=ms)

    def advance_to_next_deadline(self, group_id: str | None = None, kind: str | None = None) -> Any:
        """Move time to the earliest pending timer (of ``group_id``, of ``kind``: session,
        new_member, pending_member, rebalance, initial_delay, pending_sync, retention, or
        log_retention: the next log retention run, only by that kind) and fire it; returns what happened (as ``advance``) and the ``deadline``. 404 if none matches."""
        return self._op("advance_to_next_deadline", group_id=group_id, kind=kind)

    def deadlines(self, group_id: str | None = None, kind: str | None = None) -> Any:
        """Pending timers, earliest first: deadline_ms, in_ms, kind, group_id, member_id."""
        return self._op("deadlines", group_id=group_id, kind=kind)

    def clock(self) -> Any:
        """The coordinator's clock: now_ms, mode ("real" or "manual"), advanced_ms."""
        return self._op("clock")

    # -- group operations -------------------------------------------------------------------
    def groups(self) -> Any:
        """Every group as a dict: group_id, type, state, protocol_type, generation, members."""
        return self._op("groups")

    def group_view(self, group_id: str) -> Any:
        """State, generation, protocol, leader, members with decoded ``subscription`` and
        ``assignment``, and ``offsets`` (committed_offset, log_end_offset, lag, member_id per
        partition) with ``total_lag``. 404 if the group does not exist."""
        return self._op("group_view", group_id=group_id)

    def expire_member(self, group_id: str, member_id: str | None = None, *,
                      group_instance_id: str | None = None) -> Any:
        """Expire a member now, exactly as its session timeout would; returns what happened."""
        return self._op("expire_member", group_id=group_id, member_id=member_id,
                        group_instance_id=group_instance_id)

    def ignore_heartbeats(self, group_id: str, member_id: str | None = None, *,
                          group_instance_id: str | None = None, ignore: bool = True) -> Any:
        """Stop honouring a member's heartbeats, so it expires naturally when its session runs
        out (``advance`` gets it there at once); ``ignore=False`` honours them again."""
        return self._op("ignore_heartbeats", group_id=group_id, member_id=member_id,
                        group_instance_id=group_instance_id, ignore=ignore)

    def trigger_rebalance(self, group_id: str, reason: str | None = None) -> Any:
        """Start a rebalance of a group that has members."""
        params = {} if reason is None else {"reason": reason}
        return self._op("trigger_rebalance", group_id=group_id, **params)

    def remove_static_member(self, group_id: str, group_instance_id: str,
                             reason: str | None = None) -> Any:
        """Remove a static member as KIP-345's admin removal does."""
        return self._op("remove_static_member", group_id=group_id,
                        group_instance_id=group_instance_id, reason=reason)

    def delete_group(self, group_id: str, *, force: bool = False) -> Any:
        """Delete a group and its offsets: an Empty one, or with ``force`` any group (its
        members removed first)."""
        return self._op("delete_group", group_id=group_id, force=force)

    def committed_offsets(self, group_id: str) -> Any:
        """Committed offsets with log-end offsets and lag (kafka-consumer-groups --describe)."""
        return self._op("committed_offsets", group_id=group_id)

    def set_offsets(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> Any:
        """Commit offsets as an administrator: ``{("orders", 0): 42, ...}``, in any group state
        (an unknown group is created Empty)."""
        items = [{"topic": t, "partition": p, "offset": o} for (t, p), o in offsets.items()]
        return self._op("set_offsets", group_id=group_id, offsets=items)

    # -- timeline and waiters ---------------------------------------------------------------
    def timeline(self, group_id: str | None = None, since: int | None = None,
                 types: tuple[str, ...] = (), limit: int | None = None) -> Any:
        """Recorded events, oldest first, as dicts with ``seq`` and ``type`` (the event class:
        RequestHandled, MemberRemoved, TimeAdvanced, ...); ``since`` is a sequence number."""
        return self._op("timeline", group_id=group_id, since=since, types=tuple(types), limit=limit)

    def requests(self, api: str | None = None, client_id: str | None = None,
                 group_id: str | None = None, since: int | None = None,
                 limit: int | None = None) -> Any:
        """Recorded requests (RequestHandled events), oldest first, filtered."""
        return self._op("requests", api=api, client_id=client_id, group_id=group_id,
                        since=since, limit=limit)

    def timeline_seq(self) -> Any:
        """The sequence number of the newest event so far (pass it as ``since`` later)."""
        return self._run(lambda: control_of(self._bound.broker).timeline.seq)

    def wait_for_group(self, group_id: str, state: str | None = "Stable",
                       members: int | None = None, timeout: float = 30.0) -> Any:
        """Block until the group is in ``state`` with ``members`` members (None: any), woken by
        events; returns the group view. ``WaitTimeout`` (a TimeoutError) after ``timeout`` s."""
        return self._op("wait_for_group", group_id=group_id, state=state, members=members,
                        timeout=timeout)


class Emulator(_Handle):
    """A running emulator, driven from any thread: every method blocks until done."""

    def __init__(self, bound: BoundAddress, config: BrokerConfig,
                 call: Callable[[Callable[[], Any]], Any],
                 acall: Callable[[Callable[[], Any]], Any], *,
                 control: Any = None) -> None:
        super().__init__(bound, config, control=control)
        self._call = call  # runs a function on the emulator's trio thread
        self._acall = acall  # runs an async function there and waits for it

    # The group reads users call most, with their value types for type checkers (the shared
    # methods are typed Any because AsyncEmulator's return awaitables).
    def list_groups(self, states: str | Iterable[str] = (),
                    types: str | Iterable[str] = ()) -> tuple[ListedGroup, ...]:
        """ListGroups as values: a tuple of ListedGroup(group_id, protocol_type, state, ...);
        ``states``/``types`` a tuple of names or one name (any case)."""
        return cast("tuple[ListedGroup, ...]", super().list_groups(states, types))

    def describe_group(self, group_id: str) -> DescribedGroup:
        """DescribeGroups for one group as a value (state "Dead" if it does not exist)."""
        return cast("DescribedGroup", super().describe_group(group_id))

    def reset(self) -> tuple[str, ...]:
        """Topics, member-less groups and fault rules deleted, configured topics created again;
        returns the ids of groups kept because members are still joined."""
        return cast("tuple[str, ...]", super().reset())

    def _run(self, fn: Callable[[], Any]) -> Any:
        return self._call(fn)

    def _op(self, name: str, **params: Any) -> Any:
        op = all_operations()[name]
        parsed = parse_params(op, params)
        broker = self._bound.broker
        if op.is_async:
            return self._acall(partial(op.run, broker, parsed))
        return self._call(lambda: op.run(broker, parsed))

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Call ``predicate()`` (in this thread: it may use this emulator and any client) now and
        again after each new event the emulator records, until it returns something truthy,
        which is returned. ``WaitTimeout`` after ``timeout`` seconds."""
        timeline = self._call(lambda: control_of(self._bound.broker).timeline)
        deadline = time.monotonic() + timeout
        self._call(timeline.hold)
        try:
            while True:
                seq = self._call(lambda: timeline.seq)
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WaitTimeout(f"timed out after {timeout:g} s waiting for "
                                      f"{getattr(predicate, '__name__', 'the predicate')}")
                self._acall(partial(timeline.wait_after, seq, remaining))
        finally:
            self._call(timeline.release)

    # -- faults (control/faults.py; the operations of control/ops/faults.py) ------------------
    def _fault_op(self, name: str, **raw: Any) -> Any:
        from ..control.operations import all_operations, parse_params
        op = all_operations()[name]
        params = parse_params(op, {k: v for k, v in raw.items() if v is not None})
        return self._call(lambda: op.run(self._bound.broker, params))

    def add_fault(self, action: str, *, api: str | int | None = None,
                  min_version: int | None = None, max_version: int | None = None,
                  client_id: str | None = None, group_id: str | None = None,
                  member_id: str | None = None, topic: str | None = None,
                  error: str | int | None = None, message: str | None = None,
                  delay_ms: int | None = None, throttle_ms: int | None = None, count: int = 1,
                  always: bool = False, skip: int = 0, probability: float | None = None,
                  seed: int = 0) -> int:
        """Add a fault rule (see control/faults.py); returns its id. E.g.
        ``emu.add_fault("error", api="OffsetCommit", group_id="g", error="REBALANCE_IN_PROGRESS")``.
        Bad input raises ControlError and adds nothing."""
        rule = self._fault_op(
            "add_fault", action=action, api=api, min_version=min_version,
            max_version=max_version, client_id=client_id, group_id=group_id,
            member_id=member_id, topic=topic, error=error, message=message, delay_ms=delay_ms,
            throttle_ms=throttle_ms, count=count, always=always, skip=skip,
            probability=probability, seed=seed)
        return int(rule["id"])

    def faults(self) -> list[dict[str, Any]]:
        """The fault rules, in the order they apply, with how often each matched and fired."""
        return cast("list[dict[str, Any]]", self._fault_op("list_faults"))

    def remove_fault(self, rule_id: int) -> dict[str, Any]:
        """Remove one fault rule (ControlError, status 404, if there is none with that id)."""
        return cast("dict[str, Any]", self._fault_op("remove_fault", rule_id=rule_id))

    def clear_faults(self) -> int:
        """Remove every fault rule; returns how many there were."""
        return int(self._fault_op("clear_faults")["removed"])
    # -- end of faults ------------------------------------------------------------------------

    def unexpected_errors(self) -> list[BaseException]:
        """Exceptions the server hit that are bugs in kafka-emu (the fixtures fail the test with
        them at teardown); empty when all is well."""
        return cast("list[BaseException]", self._call(lambda: list(self._bound.broker.unexpected)))


class AsyncEmulator(_Handle):
    """A running emulator in the caller's trio program: every method is awaitable."""

    # -- faults: Emulator's fault methods, awaitable (same operations) -----------------------
    async def add_fault(self, action: str, **rule: Any) -> int:
        """Add a fault rule (the keywords of ``Emulator.add_fault``); returns its id."""
        added = await self._op("add_fault", action=action,
                               **{k: v for k, v in rule.items() if v is not None})
        return int(added["id"])

    async def faults(self) -> list[dict[str, Any]]:
        """The fault rules, in the order they apply, with how often each matched and fired."""
        return cast("list[dict[str, Any]]", await self._op("list_faults"))

    async def remove_fault(self, rule_id: int) -> dict[str, Any]:
        """Remove one fault rule (ControlError, status 404, if there is none with that id)."""
        return cast("dict[str, Any]", await self._op("remove_fault", rule_id=rule_id))

    async def clear_faults(self) -> int:
        """Remove every fault rule; returns how many there were."""
        return int((await self._op("clear_faults"))["removed"])

    async def unexpected_errors(self) -> list[BaseException]:
        """Exceptions the server hit that are bugs in kafka-emu; empty when all is well."""
        return list(self._bound.broker.unexpected)

    async def list_groups(self, states: str | Iterable[str] = (),
                          types: str | Iterable[str] = ()) -> tuple[ListedGroup, ...]:
        """ListGroups as values (see ``Emulator.list_groups``), awaited."""
        return cast("tuple[ListedGroup, ...]", await super().list_groups(states, types))

    async def describe_group(self, group_id: str) -> DescribedGroup:
        """DescribeGroups for one group as a value, awaited."""
        return cast("DescribedGroup", await super().describe_group(group_id))

    async def reset(self) -> tuple[str, ...]:
        """``Emulator.reset``, awaited."""
        return cast("tuple[str, ...]", await super().reset())

    async def _run(self, fn: Callable[[], Any]) -> Any:
        return fn()

    async def _op(self, name: str, **params: Any) -> Any:
        op = all_operations()[name]
        parsed = parse_params(op, params)
        result = op.run(self._bound.broker, parsed)
        return await result if op.is_async else result

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Evaluate ``predicate()`` (a plain or an async function) now and after each new event,
        until it returns something truthy, which is returned; ``WaitTimeout`` after ``timeout``
        seconds of wall time."""
        timeline = control_of(self._bound.broker).timeline
        deadline = trio.current_time() + timeout
        timeline.hold()
        try:
            while True:
                seq = timeline.seq
                result = predicate()
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return result
                remaining = deadline - trio.current_time()
                if remaining <= 0:
                    raise WaitTimeout(f"timed out after {timeout:g} s waiting for "
                                      f"{getattr(predicate, '__name__', 'the predicate')}")
                await timeline.wait_after(seq, remaining)
        finally:
            timeline.release()



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
