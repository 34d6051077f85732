"""Log lines you can watch: a sink on the one observer seam that turns events into log records.

At INFO, one line per group event that matters to someone watching a test or an application:
a member joined or was removed (left, session expired, rebalance timeout, ... as
``RemovalReason``), a rebalance started (with the coordinator's reason), a generation completed
(members, protocol, leader), a group was deleted. At DEBUG, also one line per request (client,
api and version, group and member where the request names them, error, latency) and per
connection.

Bounded: group lines are rate-limited by the broker's one limiter (log_limits.py, as for the
connection warnings) to ``GROUP_LINES_PER_SECOND``; the first line that gets through after a
burst says how many were held back. A group's life takes about seven lines (joined, rebalance
started, generation completed, expired, rebalance started, Empty, deleted), and Kafka logs about
as many, so a test watching a few groups sees every line, while 100,000 abandoned groups no
longer write 110 MB: at most 200 lines a second (about 30 KB), whatever the number of groups.

``attach_log_sink(broker)`` subscribes only when the ``kafka_emu`` logger would print at least
one of those lines, so with ``--log-level WARNING`` observation stays off and costs nothing.
Records carry the event's fields as ``record.kafka`` (a dict), which :class:`JsonFormatter`
writes as one JSON object per line (``kafka-emu serve --log-format json``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .log_limits import allow
from .event_rows import as_event

GROUP_LOG = logging.getLogger("kafka_emu.groups")
REQUEST_LOG = logging.getLogger("kafka_emu.requests")

if TYPE_CHECKING:
    from .events import ConnectionClosed, ConnectionOpened, RequestHandled
    from ..coordinator.events import (GenerationChanged, GroupDeleted, MemberAdded,
                                      MemberRemoved, RebalanceTriggered)


def _error_name(code: int | None) -> str:
    if code is None:
        return "-"
    try:
        from ..errors import ErrorCode
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _log(logger: logging.Logger, level: int, message: str, fields: Mapping[str, Any]) -> None:
    logger.log(level, message, extra={"kafka": dict(fields)})


GROUP_LINES_PER_SECOND = 200
_GROUP_KIND = "group events"


def _group_line(message: str, fields: Mapping[str, Any]) -> None:
    """One INFO group line, within the rate limit; the line after a held-back burst counts it."""
    if not GROUP_LOG.isEnabledFor(logging.INFO):
        return
    held = allow(_GROUP_KIND, GROUP_LINES_PER_SECOND)
    if held is None:
        return
    if held:
        message += f" ({held} group log lines suppressed before this one)"
        fields = {**fields, "suppressed": held}
    _log(GROUP_LOG, logging.INFO, message, fields)


# RemovalReason value -> how the line says it
_REMOVED = {
    "left": "left (LeaveGroup)",
    "left_heartbeat": "left (ConsumerGroupHeartbeat with member epoch -1)",
    "session_expired": "expired (no heartbeat within its session timeout)",
    "new_member_timeout": "expired (a new member that did not rejoin in time)",
    "rebalance_timeout": "removed (did not rejoin within the rebalance timeout)",
    "sync_timeout": "removed (no SyncGroup within the rebalance timeout)",
    "replaced": "replaced (its static instance id joined with a new member id)",
    "group_max_size": "removed (group.max.size reached)",
    "pending_expired": "expired (never came back after MEMBER_ID_REQUIRED)",
    "group_deleted": "removed (group deleted)",
}


class LogSink:
    """Calls for the events worth a line; everything else is ignored cheaply."""

    def __init__(self) -> None:
        # Keyed by class name, which a row carries first: the sink resolves no class for the
        # events it ignores, so a serve at INFO imports no event module for it (the group
        # events' classes come with the coordinator, at the first group request).
        self._handlers: dict[str, Callable[[Any], None]] = {
            "MemberAdded": self._member_added,
            "MemberRemoved": self._member_removed,
            "RebalanceTriggered": self._rebalance,
            "GenerationChanged": self._generation,
            "GroupDeleted": self._group_deleted,
        }
        if REQUEST_LOG.isEnabledFor(logging.DEBUG):
            self._handlers.update({"RequestHandled": self._request,
                                   "ConnectionOpened": self._opened,
                                   "ConnectionClosed": self._closed})

    def __call__(self, event: Any) -> None:
        # subscribed with rows=True: a row is turned into its event only when it makes a line
        handler = self._handlers.get(event[0] if type(event) is tuple else type(event).__name__)
        if handler is not None:
            handler(as_event(event))

    # -- group events (INFO) ------------------------------------------------------------------
    def _member_added(self, e: MemberAdded) -> None:
        static = f", instance {e.group_instance_id}" if e.group_instance_id else ""
        replaces = f", replacing {e.replaces}" if e.replaces else ""
        _group_line(
            f"group {e.group_id}: member {e.member_id} joined (client {e.client_id}{static}"
            f"{replaces})",
            {"event": "member_joined", "group_id": e.group_id, "member_id": e.member_id,
             "client_id": e.client_id, "group_instance_id": e.group_instance_id,
             "replaces": e.replaces})

    def _member_removed(self, e: MemberRemoved) -> None:
        reason = e.reason.value
        what = "pending member" if e.pending else "member"
        _group_line(
            f"group {e.group_id}: {what} {e.member_id} "
            f"{_REMOVED.get(reason, f'removed ({reason})')}",
            {"event": "member_removed", "group_id": e.group_id, "member_id": e.member_id,
             "group_instance_id": e.group_instance_id, "reason": reason,
             "pending": e.pending})

    def _rebalance(self, e: RebalanceTriggered) -> None:
        _group_line(f"group {e.group_id}: rebalance started: {e.reason}",
                    {"event": "rebalance_started", "group_id": e.group_id, "reason": e.reason})

    def _generation(self, e: GenerationChanged) -> None:
        if e.members:
            text = (f"group {e.group_id}: generation {e.generation} completed with "
                    f"{len(e.members)} member(s), protocol {e.protocol_name}, leader {e.leader}: "
                    f"{', '.join(e.members)}")
        else:
            text = f"group {e.group_id}: generation {e.generation} has no members (Empty)"
        _group_line(text, {"event": "generation_completed", "group_id": e.group_id,
                           "generation": e.generation, "protocol": e.protocol_name,
                           "leader": e.leader, "members": list(e.members)})

    def _group_deleted(self, e: GroupDeleted) -> None:
        _group_line(f"group {e.group_id}: deleted ({e.reason})",
                    {"event": "group_deleted", "group_id": e.group_id, "reason": e.reason})

    # -- requests and connections (DEBUG) -------------------------------------------------------
    def _request(self, e: RequestHandled) -> None:
        group = f" group {e.group_id}" if e.group_id else ""
        member = f" member {e.member_id}" if e.member_id else ""
        partitions = (f", {len(e.partition_errors)} partition error(s)"
                      if e.partition_errors else "")
        _log(REQUEST_LOG, logging.DEBUG,
             f"{e.peer} client {e.client_id}: {e.api} v{e.version}{group}{member} -> "
             f"{_error_name(e.error_code)}{partitions} in {e.latency_ms:.1f} ms",
             {"event": "request", "peer": e.peer, "connection_id": e.connection_id,
              "client_id": e.client_id, "client_software_name": e.client_software_name,
              "client_software_version": e.client_software_version, "api": e.api,
              "version": e.version, "correlation_id": e.correlation_id,
              "group_id": e.group_id, "member_id": e.member_id,
              "generation_id": e.generation_id, "error": _error_name(e.error_code),
              "partition_errors": [list(p) for p in e.partition_errors],
              "latency_ms": round(e.latency_ms, 3)})

    def _opened(self, e: ConnectionOpened) -> None:
        _log(REQUEST_LOG, logging.DEBUG, f"{e.peer}: connection {e.connection_id} opened",
             {"event": "connection_opened", "peer": e.peer, "connection_id": e.connection_id})

    def _closed(self, e: ConnectionClosed) -> None:
        _log(REQUEST_LOG, logging.DEBUG,
             f"{e.peer}: connection {e.connection_id} closed ({e.reason})",
             {"event": "connection_closed", "peer": e.peer, "connection_id": e.connection_id,
              "reason": e.reason})


def attach_log_sink(broker: Any) -> Callable[[], None] | None:
    """Subscribe a :class:`LogSink` to ``broker.observation`` if the level asks for its lines;
    returns the unsubscribe function, or None when nothing was subscribed."""
    if not (GROUP_LOG.isEnabledFor(logging.INFO) or REQUEST_LOG.isEnabledFor(logging.DEBUG)):
        return None
    unsubscribe: Callable[[], None] = broker.observation.subscribe(LogSink(), rows=True)
    return unsubscribe


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the event's fields."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import json  # only for --log-format json: text logging starts without it
        self._dumps = json.dumps

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") +
                               f".{int(record.msecs):03d}", "level": record.levelname,
                               "logger": record.name, "message": record.getMessage()}
        out.update(getattr(record, "kafka", {}))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return self._dumps(out, default=str)


def configure_logging(level: str, fmt: str = "text") -> None:
    """The CLI's logging: stderr, human-readable lines or JSON lines."""
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
