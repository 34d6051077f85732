"""The client contract: Kafka's VerifiableConsumer / VerifiableProducer, flags in, JSON out.

Kafka's system tests drive every client through two small programs (``VerifiableConsumer`` and
``VerifiableProducer`` in Kafka's tools; librdkafka ships one binary with ``--consumer`` /
``--producer`` modes). This module is that contract for the kit's own verifiable clients: the
flags they accept, the events they print and the small pieces every client shares (reading a
Java ``.properties`` file, a SIGTERM that asks for a clean shutdown, assignor names).

Consumer flags: ``--topic --group-id [--group-instance-id] (--bootstrap-server | --broker-list)
[--session-timeout MS] [--enable-autocommit] [--max-messages N] [--assignment-strategy S]
[--reset-policy earliest|latest|none] [--group-protocol classic|consumer]
[--group-remote-assignor NAME] [--consumer.config FILE] [--verbose]``. With ``--group-protocol
consumer`` (KIP-848, as Kafka's VerifiableConsumer takes it) the broker assigns, by the
``--group-remote-assignor`` named or its default, and the session timeout and heartbeat interval
are the broker's (``group.consumer.*``): a client ignores ``--session-timeout`` and
``--assignment-strategy`` there, as Kafka's does.
Producer flags: ``--topic (--bootstrap-server | --broker-list) [--max-messages N]
[--throughput N] [--acks -1|0|1] [--value-prefix N] [--producer.config FILE]``.
The properties file may carry ``group.instance.id``, ``enable.auto.commit``, ``group.protocol``,
``group.remote.assignor`` and ``acks`` (``all`` too) instead of the flags: that is how the kit passes them, to every client.

Events, one JSON object per line on stdout, each with ``name`` and ``timestamp`` (ms since the
epoch, as Kafka's tools print it):

- ``startup_complete``; ``shutdown_complete`` (after the client closed cleanly);
- ``partitions_assigned`` / ``partitions_revoked``: ``partitions: [{topic, partition}]``, printed
  from the library's own rebalance listener;
- ``records_consumed``: ``count`` and ``partitions: [{topic, partition, count, minOffset,
  maxOffset}]`` for one poll;
- ``offsets_committed``: ``offsets: [{topic, partition, offset[, error]}]``, ``success`` and, on
  failure, ``error``;
- producer: ``producer_send_success`` (key, value, topic, partition, offset) and
  ``producer_send_error`` (key, value, topic, exception, message).

Anything else on stdout that is not a JSON object is ignored by the kit (librdkafka's client
prints its arguments there). SIGTERM is a clean shutdown (close the client, then print
``shutdown_complete``); SIGKILL is a hard one.

This module imports no client library and no part of the server, so a client program starts
fast.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TextIO

GROUP_PROTOCOLS = ("classic", "consumer")  # Kafka's group.protocol values

# Kafka's Java assignor class names (what the system tests pass) -> the short protocol names.
_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


def assignor_names(value: str | None) -> list[str]:
    """``--assignment-strategy`` as short protocol names: accepts Java class names (as Kafka's
    system tests pass them) and short names, comma-separated."""
    if not value:
        return ["range"]
    names = []
    for part in value.split(","):
        part = part.strip()
        if part:
            names.append(_ASSIGNORS.get(part, part.lower()))
    return names or ["range"]


def read_properties(path: str | None) -> dict[str, str]:
    """A Java ``.properties`` file as a dict (``key=value`` or ``key: value``; ``#``/``!``
    comments). Enough of the format for client configs; no line continuations."""
    if not path:
        return {}
    props: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#!":
                continue
            sep = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
            if sep < 0:
                print(f"ignoring config line without '=': {line!r}", file=sys.stderr)
                continue
            props[line[:sep].strip()] = line[sep + 1:].strip()
    return props


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True)
    boot = parser.add_mutually_exclusive_group(required=True)
    boot.add_argument("--bootstrap-server", dest="bootstrap")
    boot.add_argument("--broker-list", dest="bootstrap")
    parser.add_argument("--max-messages", type=int, default=-1)


def consumer_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="verifiable consumer")
    _common(parser)
    parser.add_argument("--group-id", required=True)
    parser.add_argument("--group-instance-id")
    parser.add_argument("--session-timeout", type=int, default=30000)
    parser.add_argument("--enable-autocommit", action="store_true")
    parser.add_argument("--assignment-strategy")
    parser.add_argument("--reset-policy", default="earliest", choices=["earliest", "latest", "none"])
    parser.add_argument("--consumer.config", dest="config")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--group-protocol", choices=GROUP_PROTOCOLS)
    parser.add_argument("--group-remote-assignor")
    return parser


def producer_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="verifiable producer")
    _common(parser)
    parser.add_argument("--throughput", type=int, default=-1)
    parser.add_argument("--acks", type=int, choices=[-1, 0, 1])  # default: acks property, -1
    parser.add_argument("--value-prefix", type=int)
    parser.add_argument("--producer.config", "--command-config", dest="config")
    return parser


def parse(argv: list[str] | None, prog: str, *, group_protocols: tuple[str, ...] = ("classic",)
          ) -> tuple[str, argparse.Namespace]:
    """(mode, args) from a command line that starts with ``--consumer`` or ``--producer``
    (librdkafka's style; the mode flag may appear anywhere). ``group_protocols``: those the
    client's library speaks; another is refused (exit 2), never silently run as classic."""
    argv = list(sys.argv[1:] if argv is None else argv)
    mode = "consumer"
    for flag in ("--consumer", "--producer"):
        if flag in argv:
            argv.remove(flag)
            mode = flag[2:]
    parser = consumer_parser(prog) if mode == "consumer" else producer_parser(prog)
    args = parser.parse_args(argv)
    args.properties = read_properties(args.config)
    _lift(args, mode, parser)
    if mode == "consumer":
        args.assignors = assignor_names(args.assignment_strategy)
        if args.group_protocol not in group_protocols:
            parser.error(f"--group-protocol {args.group_protocol}: this client speaks only "
                         f"{', '.join(group_protocols)}")
    return mode, args


_ACKS = {"all": -1, "-1": -1, "0": 0, "1": 1}


def _lift(args: argparse.Namespace, mode: str, parser: argparse.ArgumentParser) -> None:
    """The settings the contract's properties file may carry instead of a flag (the kit passes
    them that way, as it does to any client): ``group.instance.id``, ``enable.auto.commit``
    (consumer) and ``acks`` (producer). A flag given as well wins."""
    props = args.properties
    if mode == "consumer":
        instance = props.pop("group.instance.id", None)
        if instance and not args.group_instance_id:
            args.group_instance_id = instance
        if props.pop("enable.auto.commit", "false").strip().lower() == "true":
            args.enable_autocommit = True
        protocol = props.pop("group.protocol", "").strip().lower()
        if args.group_protocol is None:
            if protocol and protocol not in GROUP_PROTOCOLS:
                parser.error(f"group.protocol must be one of {', '.join(GROUP_PROTOCOLS)}; got "
                             f"{protocol!r}")
            args.group_protocol = protocol or "classic"
        assignor = props.pop("group.remote.assignor", "").strip()
        if assignor and not args.group_remote_assignor:
            args.group_remote_assignor = assignor
    else:
        value = props.pop("acks", "-1").strip().lower()
        if value not in _ACKS:
            parser.error(f"acks must be one of all, -1, 0, 1; got {value!r}")
        if args.acks is None:
            args.acks = _ACKS[value]


class Events:
    """Prints contract events on stdout, one flushed JSON line each (thread-safe)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self._lock = threading.Lock()

    def emit(self, name: str, **fields: Any) -> None:
        line = json.dumps({"timestamp": int(time.time() * 1000), "name": name, **fields})
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def partitions(self, name: str, tps: Iterable[tuple[str, int]]) -> None:
        self.emit(name, partitions=[{"topic": t, "partition": p} for t, p in sorted(tps)])

    def records_consumed(self, batches: dict[tuple[str, int], list[int]]) -> int:
        """One ``records_consumed`` for a poll; ``batches`` maps (topic, partition) to the
        offsets consumed in order. Returns the number of records."""
        parts = [{"topic": t, "partition": p, "count": len(offs), "minOffset": offs[0],
                  "maxOffset": offs[-1]} for (t, p), offs in batches.items() if offs]
        count = sum(part["count"] for part in parts)
        if count:
            self.emit("records_consumed", count=count, partitions=parts)
        return count

    def offsets_committed(self, offsets: dict[tuple[str, int], int], error: str | None = None,
                          partition_errors: dict[tuple[str, int], str] | None = None) -> None:
        partition_errors = partition_errors or {}
        items = []
        for (t, p), off in sorted(offsets.items()):
            item: dict[str, Any] = {"topic": t, "partition": p, "offset": off}
            if partition_errors.get((t, p)):
                item["error"] = partition_errors[(t, p)]
            items.append(item)
        success = error is None and not any(partition_errors.values())
        fields: dict[str, Any] = {"offsets": items, "success": success}
        if not success:
            fields["error"] = error or "; ".join(sorted(set(filter(None,
                                                                   partition_errors.values()))))
        self.emit("offsets_committed", **fields)


def limit(batches: dict[tuple[str, int], list[int]], consumed: int, max_messages: int
          ) -> dict[tuple[str, int], list[int]]:
    """Trim one poll's offsets so the total never passes ``--max-messages`` (as Kafka's
    VerifiableConsumer does: the rest of the poll is dropped, uncommitted)."""
    if max_messages < 0:
        return batches
    room = max_messages - consumed
    out = {}
    for tp, offs in batches.items():
        if room <= 0:
            break
        out[tp] = offs[:room]
        room -= len(out[tp])
    return out


class StopFlag:
    """Set by SIGTERM/SIGINT: the client finishes its loop, closes cleanly and prints
    ``shutdown_complete`` (Kafka's VerifiableConsumer does the same from a shutdown hook)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> StopFlag:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.event.set())
        return self

    def __bool__(self) -> bool:
        return self.event.is_set()


def log(message: str) -> None:
    """Diagnostics go to stderr, never stdout (stdout is the event stream)."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)
