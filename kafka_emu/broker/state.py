"""The broker's shared state: the coordinator, the topics, and requests waiting for replies.

Theory of operation. Handlers turn a wire request into a coordinator command and call
``submit(command, render)``. The coordinator answers with replies -- possibly for other,
earlier requests that were parked (a JoinGroup that completes a rebalance answers every parked
JoinGroup). Each parked request is a ``Pending`` holding the function that renders its reply at
the request's own version, and an event its connection waits on. Replies for requests whose
connection has gone are dropped. After every coordinator call the timer task is woken, because
the earliest deadline may have moved.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable
from typing import Any

import trio

from .clock import Clock, perf_now
from .config import BrokerConfig
from .observe import Observation

log = logging.getLogger("kafka_emu")

_new = object.__new__


class Pending:
    """One request waiting for the coordinator's reply.

    Most commands are answered within ``submit`` itself; the event a parked request waits on is
    only made when somebody waits (``done``), not for every request.

    A request parked in the coordinator may be handed back to its connection instead of waited
    on (``RequestContext.submit(..., defer=True)``): ``submit`` returns this Pending itself, with
    what the connection needs to answer as ``dispatch.handle_frame`` would have (``request_id`` to forget it,
    the request and its header's facts for RequestHandled). The connection's loop then waits for
    the answer itself (``serve_connection``). A group of 5000 forming parks 5000 JoinGroups and
    then 5000 SyncGroups at once; each keeps this one record, not a chain of coroutine frames,
    a cancel scope or a second record."""

    __slots__ = ("render", "_done", "response", "resolved", "wake", "socket", "request_id",
                 "request", "started", "api_key", "version", "correlation_id", "client_id")

    def __init__(self, render: Callable[[Any], Any]) -> None:
        self.render = render
        self._done: trio.Event | None = None
        self.response: Any = None
        self.resolved = False
        # called once resolved: how a connection parked on this request is woken (it cancels
        # the read the connection goes on with meanwhile, Connection._park_pending)
        self.wake: Callable[[], Any] | None = None
        # the stdlib socket a connection reads while this request is parked: its read is woken
        # by trio's notify_closing once resolved (no bound method kept), and the reply is left
        # for the connection to render when it answers (``render`` is kept for that): an answer
        # that completes a rebalance would otherwise render every member's response at once
        self.socket: Any = None

    @property
    def done(self) -> trio.Event:
        """Set once the reply is rendered."""
        if self._done is None:
            self._done = trio.Event()
            if self.resolved:
                self._done.set()
        return self._done

    def resolve(self, result: Any) -> None:
        sock = self.socket
        if sock is None:
            self.response = self.render(result)
            self.render = None
        else:
            self.response = result  # rendered by its connection (``rendered``)
        self.resolved = True
        if self._done is not None:
            self._done.set()
        if sock is not None:
            # the read in serve_connection raises ClosedResourceError, which it takes as the
            # answer once resolved; the socket is not closed (the idle reaper wakes an idle
            # read the same way, Connection.expire)
            trio.lowlevel.notify_closing(sock)
        elif self.wake is not None:
            self.wake()

    def rendered(self) -> Any:
        """The reply, rendered now if ``resolve`` left that to the connection."""
        render = self.render
        if render is not None:
            self.render = None
            self.response = render(self.response)
        return self.response


class Broker:
    def __init__(self, config: BrokerConfig, *, observer: Callable[[Any], None] | None = None,
                 clock: Clock | None = None) -> None:
        self.config = config
        self.unexpected: list[BaseException] = []  # bugs; the test fixture re-raises them
        self.clock = clock or Clock(manual=config.clock == "manual")
        # The control plane's state (timeline, fault rules), attached by kafka_emu.control; the
        # broker never imports it.
        self.control: Any = None
        # ``coordinator`` is made on first use (a cached_property below): importing the coordinator is
        # about a fifth of a serve's start, and a broker serving no group never needs it; so is
        # ``resource_configs`` (the DescribeConfigs / AlterConfigs view, with the log's configs).
        self.observation = Observation(on_change=self._observer_changed,
                                       on_error=self.record_unexpected)
        if observer is not None:
            self.observation.subscribe(observer)
        self._connection_ids = itertools.count(1)
        from .topics import Topics  # the data path, kept apart from the group path
        self.topics = Topics(config)
        from .log_retention import LogRetention
        self.log_retention = LogRetention(  # runs on the timer task, as the group timers do
            self.topics, start_ms=self.clock.now_ms(),
            initial_delay_ms=config.log_initial_task_delay_ms,
            interval_ms=config.log_retention_check_interval_ms)
        from .cluster import Cluster
        from .cluster_moves import ClusterMoves
        self.cluster = Cluster(config, self.topics)  # who leads and coordinates what
        self.cluster_moves = ClusterMoves(self)
        self.pending: dict[int, Pending] = {}
        # A new request id: the counter's own __next__, bound once (a method of ours that
        # called next() on it cost a Python call on every request)
        self.new_request_id: Callable[[], int] = itertools.count(1).__next__
        self.timers_changed = trio.Event()
        # the deadline (ms) the timer task sleeps until; None: it is not sleeping on one
        self._timer_waits_for: int | None = None
        from .handlers import advertised_versions
        self.advertised = advertised_versions(dict(config.api_max_versions))
        if "consumer" not in config.coordinator.group_coordinator_rebalance_protocols:
            for key in (68, 69):  # KIP-848 APIs, off as on a broker without the consumer protocol
                self.advertised.pop(key, None)
        self.bound_host: str = config.host
        self.bound_port: int = config.port
        # connections: accepted (counted against max.connections) and described (by id)
        self.open_connections = 0
        self.connections: dict[int, Any] = {}
        self._per_host: dict[str, int] = {}
        self._slot_freed = trio.Event()
        from .idle import IdleConnections
        self.idle = IdleConnections()  # closes connections.max.idle.ms idle ones (server runs it)
        from .fetch_sessions import FetchSessionCache
        self.fetch_sessions = FetchSessionCache(config.fetch_session_cache_slots)  # KIP-227
        # control/faults.py: the rules (kept once created) and, only while one of them can
        # still fire, ``faults`` -- the one attribute a connection checks per request
        self.fault_rules: Any = None
        self.faults: Any = None
        # ACLs (security/acls.py): None unless authorizer.class.name is set, as on Kafka; every
        # request is then checked against it before its handler (security/authorize.py)
        self.authorizer: Any = None
        if config.authorizer_class_name:
            from ..security.acls import Authorizer, parse_acl_specs, parse_super_users
            self.authorizer = Authorizer(super_users=parse_super_users(config.super_users),
                                         allow_if_no_acl=config.allow_everyone_if_no_acl_found)
            for binding in parse_acl_specs(config.acls):  # emu.acls: there from the start
                self.authorizer.add(binding)

    # Made on first use, then a plain instance attribute (cached_property stores it in the
    # instance's __dict__). Not ``__getattr__``: a class defining it makes every attribute read
    # of the broker, on every request, take CPython's unspecialised lookup (about 3x slower).
    @functools.cached_property
    def coordinator(self) -> Any:
        from ..coordinator.coordinator import Coordinator
        coordinator = Coordinator(self.config.coordinator)
        emit = self.observation.emit
        if emit is not None:
            self.observation.tell(coordinator)
        self.observation.on_swap = coordinator.swap_observer  # (Observation.hold)
        return coordinator

    @functools.cached_property
    def transactions(self) -> Any:
        """The transaction coordinator (kafka_emu/transactions/), made on first use; its
        producer ids come from the idempotent producers' allocator, so the two never collide."""
        from ..transactions import TransactionConfig, TransactionCoordinator
        ids, cluster = self.topics.producer_ids, self.cluster
        return TransactionCoordinator(
            TransactionConfig.from_broker(self.config), start_ms=self.now_ms(),
            allocate_producer_id=lambda: ids.init_producer_id().producer_id,
            group_partition=lambda g: ("__consumer_offsets", cluster.offsets_partition(g)),
            on_start=self._transaction_started)

    def _transaction_started(self, md: Any, now_ms: int) -> None:
        self.timers_changed.set()  # a new timeout deadline
        emit = self.observation.emit
        if emit is not None:  # built only while somebody listens (events.py)
            from .events import TransactionBegun
            emit(TransactionBegun(at_ms=now_ms, transactional_id=md.transactional_id,
                                  producer_id=md.producer_id, producer_epoch=md.producer_epoch,
                                  timeout_ms=md.timeout_ms,
                                  partitions=tuple(sorted(md.partitions)),
                                  groups=tuple(sorted(md.groups))))

    @functools.cached_property
    def share_fetching(self) -> Any:
        """Share-group delivery (coordinator/share/delivery.py behind broker/share_fetching.py),
        made with the first ShareFetch."""
        from .share_fetching import ShareFetching
        return ShareFetching(self)

    @functools.cached_property
    def resource_configs(self) -> Any:
        from .resource_configs import ResourceConfigs
        return ResourceConfigs(self)

    def _observer_changed(self, emit: Any) -> None:
        coordinator = self.__dict__.get("coordinator")
        if coordinator is not None:  # else it is given the observer when it is made
            self.observation.tell(coordinator)

    @property
    def observer(self) -> Callable[[Any], None] | None:
        """The one emitting callable of the observer seam; None while nobody listens."""
        return self.observation.emit

    def now_ms(self) -> int:
        return self.clock.now_ms()

    # -- connections -----------------------------------------------------------------------
    def new_connection_id(self) -> int:
        return next(self._connection_ids)

    async def connection_slot(self) -> None:
        """Return once fewer than max.connections are open (the accept loop waits here)."""
        while self.open_connections >= self.config.max_connections:
            await self._slot_freed.wait()
        self.open_connections += 1

    def connection_opened(self, connection_id: int, info: Any) -> bool:
        """Register a described connection; False if its host is over max.connections.per.ip."""
        count = self._per_host.get(info.peer_host, 0)
        if count >= self.config.max_connections_per_ip:
            return False
        self._per_host[info.peer_host] = count + 1
        self.connections[connection_id] = info
        return True

    def connection_closed(self, connection_id: int) -> None:
        info = self.connections.pop(connection_id, None)
        if info is not None and "share_fetching" in self.__dict__:
            # its share sessions die with it, what their members hold is released (Kafka 4.1+)
            self.share_fetching.connection_closed(id(info))
        if info is not None:
            left = self._per_host[info.peer_host] - 1
            if left:
                self._per_host[info.peer_host] = left
            else:
                del self._per_host[info.peer_host]
        self.open_connections -= 1
        self._slot_freed.set()
        self._slot_freed = trio.Event()

    # -- the group path --------------------------------------------------------------------
    def submit(self, command: Any, render: Callable[[Any], Any]) -> Pending:
        """Run a coordinator command; the returned Pending is done unless it was parked."""
        # Pending(render), with its __init__ written out: neither type.__call__ nor a frame
        pending = _new(Pending)
        pending.render, pending._done, pending.response = render, None, None
        pending.resolved, pending.wake, pending.socket = False, None, None
        pending_by_id = self.pending
        pending_by_id[command.request_id] = pending
        # clock.now_ms(), its answer within the millisecond tested inline (Clock.ms_cache)
        perf, cache = perf_now(), self.clock.ms_cache
        now_ms = cache[2] if cache[0] <= perf < cache[1] else self.clock.now_ms()
        coordinator = self.coordinator
        for reply in coordinator.handle(command, now_ms):  # route(...), written out
            answered = pending_by_id.pop(reply.request_id, None)
            if answered is not None:  # None: its connection closed; drop the reply
                answered.resolve(reply.result)
        # _wake_timers_if_sooner(), its usual answer (no earlier deadline) tested inline
        waiting_for = self._timer_waits_for
        if waiting_for is None or not coordinator.none_due_before(waiting_for):
            self._wake_timers_if_sooner()
        return pending

    def _wake_timers_if_sooner(self) -> None:
        """Wake the timer task only if the earliest deadline is now before the one it sleeps
        until. A heartbeat or commit moves its member's deadline later, which the sleeping task
        may ignore: woken at the old deadline it finds nothing due and sleeps again. Waking it
        after every request instead cost a task switch per request."""
        waiting_for = self._timer_waits_for
        if waiting_for is not None:
            coordinator = self.coordinator
            if coordinator.none_due_before(waiting_for):  # the usual answer, without settling
                return
            deadline = coordinator.next_deadline()
            if deadline is None or deadline >= waiting_for:
                return
        self.timers_changed.set()

    def route(self, replies) -> None:
        for reply in replies:
            pending = self.pending.pop(reply.request_id, None)
            if pending is not None:  # None: its connection closed; drop the reply
                pending.resolve(reply.result)

    def delete_topic(self, name: str | None = None, topic_id=None):
        """Delete a topic by name or id (KafkaError if unknown): its log goes, and the coordinator
        drops every group's committed offsets for it, as Kafka's does."""
        catalogue = self.topics.catalogue
        topic = catalogue.delete_topic(name) if name is not None else catalogue.delete_topic_by_id(topic_id)
        self.cluster.forget_topic(topic.topic_id)
        self.route(self.coordinator.partitions_deleted(
            [(topic.name, p) for p in range(len(topic.partitions))], self.now_ms()))
        self.timers_changed.set()
        return topic

    def forget(self, request_id: int) -> None:
        """A connection closed while its request was parked."""
        self.pending.pop(request_id, None)

    def query(self, command: Any) -> Any:
        """Run a read-only coordinator command and return its result (fixtures, control-plane
        views); the look itself is not observed (``Coordinator.query``)."""
        result = None
        replies = self.coordinator.query(command, self.now_ms())
        for reply in replies:
            if reply.request_id == command.request_id:
                result = reply.result
        self.route(r for r in replies if r.request_id != command.request_id)  # timers that fired
        self.timers_changed.set()
        if result is not None:
            return result
        raise RuntimeError(f"the coordinator did not answer {type(command).__name__}")

    def next_timer(self) -> int:
        """The earliest of the coordinators' next deadlines and the next log retention run."""
        coordinator = self.__dict__.get("coordinator")  # not made yet: no group deadlines
        deadline = coordinator.next_deadline() if coordinator is not None else None
        transactions = self.__dict__.get("transactions")
        if transactions is not None:
            txn_deadline = transactions.next_deadline()
            if txn_deadline is not None and (deadline is None or txn_deadline < deadline):
                deadline = txn_deadline
        share = self.__dict__.get("share_fetching")  # acquisition locks of share groups
        if share is not None:
            lock_deadline = share.delivery.next_deadline()
            if lock_deadline is not None and (deadline is None or lock_deadline < deadline):
                deadline = lock_deadline
        check = self.log_retention.next_check_ms
        return check if deadline is None or check < deadline else deadline

    def fire_timers(self, now_ms: int) -> list:
        """Run what fell due by ``now_ms``: the log retention run (its trimmed partitions are
        returned) and the coordinator's timers (their replies routed)."""
        trimmed = self.log_retention.run_due(now_ms)
        if "coordinator" in self.__dict__:
            self.route(self.coordinator.expire(now_ms))
        if "share_fetching" in self.__dict__:  # expired acquisition locks release records
            self.share_fetching.expire(now_ms)
        if "transactions" in self.__dict__:  # timed-out transactions are aborted and fenced
            from .txn_markers import write_all
            write_all(self, self.transactions.expire(now_ms), now_ms)
        return trimmed

    async def run_timers(self) -> None:
        """Sleep until the next deadline (or until it may have moved); fire what is due."""
        while True:
            self.timers_changed = trio.Event()
            self._timer_waits_for = None
            deadline = self.next_timer()
            if deadline > self.now_ms():  # a manual clock never gets there by waiting
                self._timer_waits_for = deadline
                with trio.move_on_at(self.clock.trio_time(deadline)):
                    await self.timers_changed.wait()
                    continue
                self._timer_waits_for = None
            try:
                self.fire_timers(max(deadline, self.now_ms()))
            except Exception as exc:  # noqa: BLE001 - a bug: recorded, and the timers go on
                # (a timer is taken off its queue before it fires, so this one does not come
                # back; an error out of this task would end the server's loop and every
                # connection with it, and leave a test only trio's "run() has exited")
                log.exception("internal error firing timers; the emulator keeps serving")
                self.record_unexpected(exc)

    def record_unexpected(self, exc: BaseException) -> None:
        self.unexpected.append(exc)
