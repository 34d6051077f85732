"""Kafka's share consumer system tests (``tests/kafkatest/tests/client/share_consumer_test.py``,
ShareConsumerTest) as scenarios for share groups (KIP-932).

Kafka's test runs three ``VerifiableShareConsumer`` nodes in one share group against a
three-broker cluster while a producer writes, and checks what the consumers report: every
record produced is consumed (and acknowledged) at least once, through consumer bounces (clean
and hard, one at a time or all), consumer failures and broker bounces. Here the same, at a
smaller scale (hundreds of records instead of 100k-1M, one bounce instead of five), with the
kit appending records straight into the log, and with two things Kafka's test cannot see: the
emulator's ``ShareRecordsChanged`` timeline, replayed offset by offset (no record held by two
members at once, delivery counts consistent, every record accepted on the broker, none
archived), and the share-partition's start offset reaching the log end at the finish. A hard
kill's records come back as Kafka's do once the member's session expires (the emulator's clock
is moved to that deadline instead of waiting 45 s).

Each node runs the client's share consumer program (:func:`share_command`; the kit's own is
``clients/confluent_kafka_share.py``); a client without one skips these scenarios.
"""

from __future__ import annotations

import sys
from typing import Any

from .harness import Harness, ScenarioFailed, ScenarioSkipped
from .process import ClientProcess
from .record import Violation
from .scenarios import nodes, scenario
from .share_tracking import ShareTracker, all_consumed, server_rules

# share.version 1 with fast heartbeats: members join and leave in a few hundred ms
SETTINGS = {"group.share.heartbeat.interval.ms": 100}
ONCE = "a share group has no group protocol to vary: the scenario runs in the classic run"
NO_SHARE_CONSUMER = "{} has no share consumer program in the kit (KIP-932)"
SHARE_CLIENTS = {"confluent-kafka": "kafka_emu.conformance.clients.confluent_kafka_share"}


SHARE_SINCE = {"confluent-kafka": (2, 15)}  # the release that added ShareConsumer (KIP-932)


def _release(version: str | None) -> tuple[int, ...]:
    parts = []
    for piece in (version or "").split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def share_command(client) -> tuple[str, ...] | None:
    """The client's verifiable share consumer (argv), run by the same interpreter as its
    consumer program (a matrix column's own venv), or None."""
    module = SHARE_CLIENTS.get(client.name)
    if module is None:
        return None
    argv = client.consumer
    own = len(argv) > 2 and argv[1] == "-m" and argv[2].startswith("kafka_emu.conformance.")
    python = argv[0] if own else sys.executable
    return (python, "-m", module)


def share_skip_reason(client) -> str | None:
    """Why ``client`` cannot run the share scenarios (no share consumer program, or a release
    before its library had one), or None."""
    if share_command(client) is None:
        return NO_SHARE_CONSUMER.format(client.name)
    since = SHARE_SINCE.get(client.name)
    have = _release(client.library_version)
    if since and have and have < since:
        return (f"{client.name} {client.library_version} has no ShareConsumer (KIP-932 came "
                f"with {'.'.join(map(str, since))})")
    return None


class ShareHarness(Harness):
    """The harness with share consumers: a :class:`ShareTracker` instead of the consumer
    group's, the share group read with ShareGroupDescribe."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tracker: ShareTracker = ShareTracker()  # type: ignore[assignment]
        self.ack_mode = "auto"

    def sync(self):  # type: ignore[override]
        entries = self.log.snapshot()
        self.tracker.feed(entries[self._seen:])
        self._seen = len(entries)
        return self.tracker

    def start(self, node: str, **_: Any) -> ClientProcess:  # type: ignore[override]
        command = share_command(self.client)
        if command is None:
            raise ScenarioSkipped(NO_SHARE_CONSUMER.format(self.client.name))
        if node in self.procs and self.procs[node].running:
            raise ScenarioFailed(f"{node} is already running")
        life = self.lives.get(node, 0) + 1
        self.lives[node] = life
        props = self.workdir / f"{node}.{life}.properties"
        props.write_text(f"client.id={node}.{life}\n", encoding="utf-8")
        argv = [*command, "--topic", self.topic, "--group-id", self.group, "--bootstrap-server",
                self.emu.bootstrap_servers, "--offset-reset-strategy", "earliest",
                "--acknowledgement-mode", self.ack_mode, "--consumer.config", str(props)]
        proc = ClientProcess(node, life, argv, self.log, stderr_dir=self.workdir)
        self.procs[node] = proc
        return proc

    def group_state(self) -> tuple[str, int]:
        g = self.emu.describe_share_group(self.group)
        return g.state, len(g.members)

    def describe(self) -> str:
        t = self.tracker
        live = ", ".join(f"{n.name}:{n.consumed}/{n.acknowledged}"
                         for n in sorted(t.nodes.values(), key=lambda n: n.name) if n.alive)
        try:
            state, count = self.group_state()
            server = f"share group {state} with {count} member(s)"
        except Exception as exc:  # the emulator may be gone in teardown
            server = f"share group unknown ({exc!r})"
        return (f"live (consumed/acknowledged): {live or 'none'}; unique consumed "
                f"{t.unique_consumed()}; {server}")

    # -- waits (Kafka's VerifiableShareConsumerTest) ---------------------------------------
    def await_members(self, count: int, **_: Any) -> None:  # type: ignore[override]
        self.wait_until(f"{count} share member(s) in the group",
                        lambda: self.group_state() == ("Stable", count))

    def await_consumed(self, min_messages: int = 50, timeout: float | None = None) -> None:
        target = self.sync().total_consumed + min_messages
        self.wait_until(f"{min_messages} more records consumed",
                        lambda: self.tracker.total_consumed >= target, timeout)

    def await_consumed_by(self, node: str, min_messages: int = 1) -> None:
        target = self.sync().node(node).consumed + min_messages
        self.wait_until(f"{node} to consume {min_messages} more",
                        lambda: self.tracker.node(node).consumed >= target)

    def await_all_acknowledged(self) -> dict:
        """Stop producing; wait until every record up to the log end was consumed (as the
        consumers report it) and accepted on the broker (each share-partition's start offset
        at the log end). A hard-killed consumer may have had its last acknowledgement accepted
        without living to print it: the broker's view settles acknowledgement."""
        self.stop_producing()
        ends = self.log_end()

        def done() -> bool:
            consumed = self.tracker.consumed
            if any(o not in consumed.get(tp, ()) for tp, end in ends.items()
                   for o in range(end)):
                return False
            starts = {(p["topic"], p["partition"]): p["start_offset"]
                      for p in self.emu.share_partitions(self.group)}
            return all(starts.get(tp, -1) >= end for tp, end in ends.items() if end)
        self.wait_until("every record produced consumed and accepted", done)
        return ends

    def hard_kill(self, node: str, live_after: int) -> None:
        """SIGKILL ``node``, then expire its session now (moving the emulator's clock): the
        member is fenced and its acquired records released, as after share.session.timeout."""
        self.stop(node, clean=False)
        self.expire_sessions(live_after, fallback_session_ms=45000)


def finish(h: ShareHarness) -> list[Violation]:
    """Kafka's ending (every record produced consumed at least once, as the consumers report
    it), then the broker's view: the share-partitions' start offsets at the log end, and the
    timeline's rules (every record accepted, none held twice, delivery counts)."""
    ends = h.await_all_acknowledged()
    h.stop_all(clean=True)
    h.sync()
    out = all_consumed(h.tracker, ends)
    for part in h.emu.share_partitions(h.group):
        tp = (part["topic"], part["partition"])
        if tp in ends and part["start_offset"] != ends[tp]:
            out.append(Violation("share-start-offset", f"{tp[0]}-{tp[1]}: start offset "
                                 f"{part['start_offset']} after the run, log end {ends[tp]}"))
    events = h.emu.timeline(types=("ShareRecordsChanged",))
    return out + server_rules(events, group_id=h.group, ends=ends)


def _every_node_worked(h: ShareHarness) -> list[Violation]:
    """Kafka's single/multiple-partition tests: each consumer consumed and acknowledged some."""
    return [Violation("share-idle-consumer", f"{n.name} consumed {n.consumed} and acknowledged "
                      f"{n.acknowledged}") for n in h.tracker.nodes.values()
            if n.consumed == 0 or n.acknowledged == 0]


def _register(name: str, kafka_test: str, partitions: int = 3, brokers: int = 1):
    return scenario(name, kafka_test, partitions=partitions, brokers=brokers,
                    settings=SETTINGS, not_on={"consumer": ONCE}, kind="share")


def _consume_all(h: ShareHarness, produced: int, exact: bool) -> list[Violation]:
    h.produce_in_background(per_partition=5, every_s=0.05)
    for node in nodes():
        h.start(node)
    h.await_members(len(nodes()))
    h.wait_until(f"{produced} records produced", lambda: sum(h.log_end().values()) >= produced)
    out = finish(h)
    produced_total = sum(h.log_end().values())
    if exact and h.tracker.total_acked != produced_total:  # Kafka's assertion, exactly
        out.append(Violation("share-acknowledged-count", f"the consumers report "
                             f"{h.tracker.total_acked} records acknowledged for {produced_total} "
                             "produced (no consumer failed: each is accepted exactly once)"))
    return out + _every_node_worked(h)


for _mode in ("auto", "sync", "async"):
    def _single(h: ShareHarness, mode: str = _mode) -> list[Violation]:
        h.ack_mode = mode
        return _consume_all(h, 600, exact=True)
    _single.__doc__ = (f"Three share consumers (acknowledgement mode {_mode}) read one partition "
                       "while records flow: each consumes some, every record is accepted exactly "
                       "once, none is held by two at once.")
    _register(f"share_single_topic_partition_{_mode}",
              f"ShareConsumerTest.test_share_single_topic_partition (acknowledgement_mode="
              f"{_mode})", partitions=1)(_single)


@_register("share_multiple_partitions", "ShareConsumerTest.test_share_multiple_partitions")
def share_multiple_partitions(h: ShareHarness) -> list[Violation]:
    """Three share consumers read three partitions while records flow: every record accepted
    exactly once, each consumer does some of the work."""
    return _consume_all(h, 900, exact=True)


def _bounce(h: ShareHarness, *, clean: bool, mode: str) -> list[Violation]:
    h.produce_in_background()
    for node in nodes():
        h.start(node)
    h.await_members(len(nodes()))
    h.await_consumed()
    if mode == "all":
        for node in nodes():
            h.stop(node, clean=True) if clean else h.stop(node, clean=False)
        if not clean:
            h.expire_sessions(0, fallback_session_ms=45000)
        for i, node in enumerate(nodes(), 1):
            h.start(node)
            h.await_members(i)
            h.await_consumed_by(node)
    else:
        for node in nodes():
            if clean:
                h.stop(node)
            else:
                h.hard_kill(node, len(nodes()) - 1)
            h.start(node)
            h.await_members(len(nodes()))
            h.await_consumed_by(node)
    return finish(h)


for _clean in (True, False):
    for _mode in ("all", "rolling"):
        def _run(h: ShareHarness, clean: bool = _clean, mode: str = _mode) -> list[Violation]:
            return _bounce(h, clean=clean, mode=mode)
        _how = "clean" if _clean else "hard"
        _run.__doc__ = (f"Share consumers bounced ({_how}, {_mode}) while records flow: every "
                        "record produced is acknowledged at least once; hard kills' records come "
                        "back when the member's session expires.")
        _register(f"share_consumer_bounce_{_how}_{_mode}",
                  f"ShareConsumerTest.test_share_consumer_bounce (clean_shutdown={_clean}, "
                  f"bounce_mode={_mode})")(_run)


for _clean in (True, False):
    for _failed in (1, 2):
        def _fail(h: ShareHarness, clean: bool = _clean, failed: int = _failed
                  ) -> list[Violation]:
            """Share consumers fail and the rest go on."""
            h.produce_in_background()
            for node in nodes():
                h.start(node)
            h.await_members(len(nodes()))
            h.await_consumed()
            for i, node in enumerate(nodes()[:failed], 1):
                if clean:
                    h.stop(node)
                else:
                    h.hard_kill(node, len(nodes()) - i)
            h.await_members(len(nodes()) - failed)
            h.await_consumed(100)
            return finish(h)
        _how = "clean" if _clean else "hard"
        _fail.__doc__ = (f"{_failed} of three share consumers stop ({_how}) while records flow; "
                         "the rest consume everything produced, at least once.")
        _register(f"share_consumer_failure_{_how}_{_failed}",
                  f"ShareConsumerTest.test_share_consumer_failure (clean_shutdown={_clean}, "
                  f"num_failed_consumers={_failed})")(_fail)


@_register("share_broker_rolling_bounce", "ShareConsumerTest.test_broker_rolling_bounce "
           "(one bounce; the emulator's stop_broker drops connections as a hard stop does, so "
           "clean_shutdown has no second variant)", brokers=3)
def share_broker_rolling_bounce(h: ShareHarness) -> list[Violation]:
    """Each of three brokers is stopped and started again while share consumers read:
    partition leadership and the share coordinator move, every record is still acknowledged
    at least once."""
    h.produce_in_background()
    for node in nodes():
        h.start(node)
    h.await_members(len(nodes()))
    h.await_consumed()
    epochs = {p: h.emu.partition(h.topic, p)["leader_epoch"] for p in range(h.partitions)}
    for broker in h.emu.brokers():
        h.emu.stop_broker(broker["node_id"])
        h.await_consumed(30)
        h.emu.start_broker(broker["node_id"])
    h.await_consumed(100)
    out = finish(h)
    # the scenario is about leaders moving under share-partitions: check that they did
    still = [p for p, e in epochs.items() if h.emu.partition(h.topic, p)["leader_epoch"] == e]
    if still:
        out.append(Violation("share-no-leader-move", f"partitions {still} kept their leader "
                             "through the bounces: the scenario did not test a leader change"))
    return out
