"""The scenario catalogue: Kafka's consumer system tests, re-expressed for one emulator.

Each scenario names the Kafka test it comes from (``tests/kafkatest/tests/client/
consumer_test.py``: ``OffsetValidationTest`` and ``AssignmentValidationTest``) and keeps its
checks; what changes is the scale (3 consumers, 3 partitions, 2 bounces instead of 5, a kit
producer appending straight into the log) and the waiting: session expiry is made to happen with
the control plane's virtual clock instead of by waiting it out, and the protocol error paths
Kafka's tests cannot provoke are injected as fault rules.

A scenario function gets a :class:`~kafka_emu.conformance.harness.Harness` and returns the
violations of its own checks; the runner adds the checks every scenario shares (the stream
rules, no overlapping ownership, valid checkpoints, the server-side rules).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from . import verdicts
from .harness import (
    SESSION_TIMEOUT_MS,
    STATIC_SESSION_TIMEOUT_MS,
    Harness,
    ScenarioFailed,
)
from .record import Violation

NUM_CONSUMERS = 3
NUM_BOUNCES = 2  # Kafka's tests bounce 5 times; 2 exercise the same paths in a third the time
# Session timeout for hard kills when the emulator cannot advance time: short, so waiting it out
# stays cheap. With the control plane the kit keeps the normal one and expires it at once.
FALLBACK_SESSION_MS = 3000


@attrs.frozen(kw_only=True)
class Scenario:
    name: str
    summary: str
    kafka_test: str  # the Kafka system test (and parameters) it re-expresses
    run: Callable[[Harness], list[Violation]]
    partitions: int = 3
    brokers: int = 1  # brokers of the scenario's emulator (a cluster in one process)
    settings: dict[str, object] = attrs.field(factory=dict)  # broker settings it needs
    needs: frozenset[str] = frozenset()  # "static", "faults", "clock"
    skip: str | None = None  # always skipped, with this reason
    # group protocol -> why the scenario means nothing there (skipped on it, as Kafka's test
    # matrix leaves it out)
    not_on: dict[str, str] = attrs.field(factory=dict)
    kind: str = "consumer"  # "share": share consumers (share_scenarios.py), their own checks


CATALOGUE: dict[str, Scenario] = {}


def scenario(name: str, kafka_test: str, *, partitions: int = 3, needs: tuple[str, ...] = (),
             skip: str | None = None, brokers: int = 1,
             settings: dict[str, object] | None = None, not_on: dict[str, str] | None = None,
             kind: str = "consumer"):
    def register(fn: Callable[[Harness], list[Violation]]):
        doc = " ".join((fn.__doc__ or "").split("\n\n")[0].split())
        CATALOGUE[name] = Scenario(name=name, summary=doc, kafka_test=kafka_test, run=fn,
                                   partitions=partitions, needs=frozenset(needs), skip=skip,
                                   brokers=brokers, settings=dict(settings or {}),
                                   not_on=dict(not_on or {}), kind=kind)
        return fn
    return register


def nodes(count: int = NUM_CONSUMERS) -> list[str]:
    return [f"c{i}" for i in range(1, count + 1)]


def finish(h: Harness, *, commits: bool = True, duplicates: str = "none") -> list[Violation]:
    """Kafka's ending: stop producing, let the consumers catch up, stop them all cleanly, then
    no loss, and (``duplicates="none"``) total consumed == distinct offsets, and with manual
    commits last commit == position. ``duplicates="uncommitted"`` allows redelivery of records
    whose commit failed; ``"any"`` (after hard kills) leaves it to the always-on rule that
    nothing already committed is delivered again."""
    ends = h.drain(commits=commits)
    h.stop_all(clean=True)
    h.sync()
    out = verdicts.no_loss(h.tracker, ends)
    if duplicates == "none":
        out += verdicts.no_duplicates(h.tracker)
    elif duplicates == "uncommitted":
        out += verdicts.no_duplicates(h.tracker, excuse_failed_commits=True)
    if commits:
        out += verdicts.final_commits(h.tracker, ends)
    return out


def _session_ms(h: Harness, normal: int = SESSION_TIMEOUT_MS) -> int:
    return normal if h.can_advance() else FALLBACK_SESSION_MS


# -- OffsetValidationTest / AssignmentValidationTest ------------------------------------------

PRODUCED = 300


@scenario("produce_consume_validate", "ProduceConsumeValidateTest (VerifiableProducer + "
          "consumer): the client's own producer, then its consumers")
def produce_consume_validate(h: Harness) -> list[Violation]:
    """The client's verifiable producer sends 300 records with acks=all: each acknowledged
    once, at the offsets the log holds; then two consumers read them all exactly once."""
    h.run_producer("p1", PRODUCED)
    h.sync()
    out = verdicts.producer_delivery(h.log.snapshot(), "p1", PRODUCED, h.log_end())
    for node in nodes(2):
        h.start(node)
    h.await_all_members()
    return out + finish(h)


@scenario("group_consumption", "OffsetValidationTest.test_group_consumption")
def group_consumption(h: Harness) -> list[Violation]:
    """Consumers join one by one and leave one by one while records flow; every rebalance
    leaves a valid assignment and the partitions readable; nothing lost or read twice."""
    h.produce_in_background()
    for i, node in enumerate(nodes(), 1):
        h.start(node)
        h.await_members(i)
        h.await_valid_assignment(i, f"after {node} joined")
        h.await_consumed()
    for i, node in enumerate(nodes()[:-1], 1):
        h.stop(node)
        h.await_members(NUM_CONSUMERS - i)
        h.await_valid_assignment(NUM_CONSUMERS - i, f"after {node} left")
        h.await_consumed()
    return finish(h)


COOPERATIVE_STICKY = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
# Why the client-side assignment scenarios mean nothing on the consumer protocol
BROKER_ASSIGNS = ("the broker assigns on the consumer protocol (group.remote.assignor): Kafka's "
                  "matrix runs assignment_strategy with group_protocol=classic only")
ONLY_CONSUMER = ("group.remote.assignor is the consumer protocol's: Kafka's matrix runs "
                 "group_remote_assignor with group_protocol=consumer only")


@scenario("valid_assignment", "AssignmentValidationTest.test_valid_assignment (classic: "
          "RangeAssignor; consumer: group_remote_assignor=uniform)", partitions=6)
def valid_assignment(h: Harness, strategy: str | None = None,
                     remote: str = "uniform") -> list[Violation]:
    """Consumers join one by one over 6 partitions; after every rebalance each partition is
    assigned to exactly one consumer (on the consumer protocol by the broker's uniform
    assignor, or the one --group-remote-assignor names)."""
    out = []
    remote = h.remote_assignor or remote
    for i, node in enumerate(nodes(), 1):
        h.start(node, assignment_strategy=strategy, remote_assignor=remote)
        h.await_members(i)
        h.await_valid_assignment(i, f"{'epoch' if h.group_protocol == 'consumer' else 'generation'}"
                                 f" with {i} member(s)")
    if h.group_protocol == "consumer":  # else a client ignoring the assignor would pass
        used = h.emu.describe_consumer_group(h.group).assignor_name
        if used != remote:
            out.append(Violation("scenario", f"the group assigned with {used!r}: the client did "
                                 f"not send group.remote.assignor={remote}"))
    elif strategy == COOPERATIVE_STICKY:  # else the scenario would test nothing new
        protocol = h.emu.describe_group(h.group).protocol_data
        if protocol != "cooperative-sticky":
            out.append(Violation("scenario", f"the group chose assignor {protocol!r}: the client "
                                 "did not take --assignment-strategy " + strategy))
    h.stop_all()
    return out


@scenario("remote_range_valid_assignment", "AssignmentValidationTest.test_valid_assignment("
          "group_protocol=consumer, group_remote_assignor=range)", partitions=6,
          not_on={"classic": ONLY_CONSUMER})
def remote_range_valid_assignment(h: Harness) -> list[Violation]:
    """valid_assignment with the broker's range assignor (group.remote.assignor=range)."""
    return valid_assignment(h, remote="range")


@scenario("cooperative_valid_assignment", "AssignmentValidationTest.test_valid_assignment("
          "assignment_strategy=CooperativeStickyAssignor)", partitions=6, needs=("cooperative",),
          not_on={"consumer": BROKER_ASSIGNS})
def cooperative_valid_assignment(h: Harness) -> list[Violation]:
    """valid_assignment with the cooperative-sticky assignor: partitions move in two
    rebalances and the listener reports deltas; after every rebalance each partition is
    assigned to exactly one consumer, and none is owned by two at once in between."""
    return valid_assignment(h, COOPERATIVE_STICKY)


def _bounce(h: Harness, *, mode: str, clean: bool, keep_alive: int = 0,
            instance_ids: bool = False, bounces: int = NUM_BOUNCES, session_ms: int) -> None:
    bounced = nodes()[keep_alive:]

    def restart(node: str) -> None:
        h.start(node, instance_id=f"{h.group}-{node}" if instance_ids else None,
                session_timeout_ms=session_ms)

    for _ in range(bounces):
        if mode == "rolling":
            for node in bounced:
                h.stop(node, clean=clean)
                if not clean:
                    h.expire_sessions(NUM_CONSUMERS - 1, session_ms)
                restart(node)
                h.await_all_members()
                h.await_consumed()
        else:
            for node in bounced:
                h.procs[node].terminate() if clean else h.procs[node].kill()
            for node in bounced:
                if not h.procs[node].wait():
                    raise ScenarioFailed(f"{node} did not stop within 30s")
            if not clean:
                h.expire_sessions(keep_alive, session_ms)
            for node in bounced:
                restart(node)
            h.await_all_members()
            h.await_consumed()


def _consumer_bounce(mode: str, clean: bool):
    def run(h: Harness) -> list[Violation]:
        session_ms = SESSION_TIMEOUT_MS if clean else _session_ms(h)
        h.produce_in_background()
        for node in nodes():
            h.start(node, session_timeout_ms=session_ms)
        h.await_all_members()
        h.await_valid_assignment(NUM_CONSUMERS, "before bouncing")
        _bounce(h, mode=mode, clean=clean, session_ms=session_ms)
        h.await_valid_assignment(NUM_CONSUMERS, "after bouncing")
        return finish(h, duplicates="none" if clean else "any")
    return run


for _mode in ("rolling", "all"):
    for _clean in (True, False):
        _how = "clean" if _clean else "hard"
        _fn = _consumer_bounce(_mode, _clean)
        _fn.__doc__ = (f"Bounce the consumers {'one at a time' if _mode == 'rolling' else 'all at once'}"
                       f" with {'SIGTERM' if _clean else 'SIGKILL (sessions expired by advancing time)'}"
                       f" twice; no loss{', no duplicates' if _clean else ', nothing committed read again'}.")
        scenario(f"consumer_bounce_{_how}_{_mode}",
                 f"OffsetValidationTest.test_consumer_bounce(clean_shutdown={_clean}, "
                 f"bounce_mode={_mode})")(_fn)


EAGER_ONLY = ("it counts the revocations of an eager rebalance, which the consumer protocol never "
              "makes (it reconciles incrementally): Kafka runs it with group_protocol=classic "
              "only (test_static_consumer_bounce_with_eager_assignment)")


def _static_bounce(mode: str, static: bool):
    def run(h: Harness) -> list[Violation]:
        h.produce_in_background()
        for node in nodes():
            h.start(node, instance_id=f"{h.group}-{node}" if static else None,
                    session_timeout_ms=STATIC_SESSION_TIMEOUT_MS)
        h.await_all_members()
        before = h.revocations()
        _bounce(h, mode=mode, clean=True, keep_alive=1, instance_ids=static,
                session_ms=STATIC_SESSION_TIMEOUT_MS)
        h.await_valid_assignment(NUM_CONSUMERS, "after bouncing")
        out = verdicts.revocations(h.sync(), ["c1"], before, static=static)
        return out + finish(h)
    return run


for _mode in ("rolling", "all"):
    for _static in (True, False):
        _kind = "static" if _static else "dynamic"
        _fn = _static_bounce(_mode, _static)
        _fn.__doc__ = (f"Bounce two of three {_kind} members {'one at a time' if _mode == 'rolling' else 'together'};"
                       f" the member kept alive must {'never revoke (no rebalance)' if _static else 'revoke (a rebalance per bounce)'}.")
        scenario(f"{_kind}_consumer_bounce_{_mode}",
                 f"OffsetValidationTest.test_static_consumer_bounce_with_eager_assignment("
                 f"static_membership={_static}, bounce_mode={_mode})",
                 needs=("static",) if _static else (), not_on={"consumer": EAGER_ONLY})(_fn)


# Kafka's OffsetValidationTest runs two brokers and a topic replicated on both, so either can
# lead every partition and coordinate the group while the other restarts.
_CLUSTER = {"brokers": 2, "settings": {"default.replication.factor": 2}}
BROKER_DOWN_S = 1.0  # how long a rolled broker stays down


def _roll_brokers(h: Harness) -> None:
    """Kafka's rolling_bounce_brokers: restart each broker in turn (stop, then start at once on
    the same address), waiting for the group and consumption after each."""
    for broker in [b["node_id"] for b in h.emu.brokers()]:
        h.emu.stop_broker(broker)
        time.sleep(BROKER_DOWN_S)
        h.emu.start_broker(broker)
        h.await_all_members()
        h.await_consumed()


@scenario("static_member_persisted_after_rejoin",
          "OffsetValidationTest.test_static_consumer_persisted_after_rejoin", needs=("static",),
          **_CLUSTER)
def static_member_persisted_after_rejoin(h: Harness) -> list[Violation]:
    """A bounced static member rejoins under a new member id, which the coordinator keeps for
    its instance id; then both brokers roll, so the group's coordinator moves and reloads the
    group: the static members must still be the ones it knows (not fenced) and consume on."""
    h.produce_in_background()
    for node in nodes():
        h.start(node, instance_id=f"{h.group}-{node}", session_timeout_ms=STATIC_SESSION_TIMEOUT_MS)
    h.await_all_members()
    old = h.members()
    _bounce(h, mode="rolling", clean=True, keep_alive=0, instance_ids=True, bounces=1,
            session_ms=STATIC_SESSION_TIMEOUT_MS)
    new = h.members()
    _roll_brokers(h)
    out = []
    for instance, member in sorted(old.items()):
        if instance not in new:
            out.append(Violation("scenario", f"instance {instance} is no longer in the group"))
        elif new[instance] == member:
            out.append(Violation("scenario", f"instance {instance} kept member id {member} "
                                 "after a restart (a rejoin must get a new member id)"))
    return out + finish(h)


def _fencing_consumer_protocol_stable(h: Harness) -> list[Violation]:
    """Kafka 4.x on the consumer protocol (test_fencing_static_consumer, group_protocol=consumer,
    fencing_stage=stable): the live member keeps its instance id and the newcomer is refused
    (UNRELEASED_INSTANCE_ID, fatal to the client) without a rebalance; once the live member
    leaves, the newcomer joins under that instance id."""
    h.produce_in_background()
    for node in nodes():
        h.start(node, instance_id=f"{h.group}-{node}")
    h.await_all_members()
    h.await_valid_assignment(NUM_CONSUMERS, "before the conflicting member")
    before = _rebalances(h)
    h.start("x1", instance_id=f"{h.group}-c1")
    h.wait_until("the conflicting process x1 to stop", lambda: not h.procs["x1"].running,
                 expect_running=tuple(nodes()))
    h.procs["x1"].expected_exit = True
    h.await_consumed()
    out = _unexpected_rebalances(h, before, "a static member joining with an instance id in use")
    if h.sync().node("x1").assigned_count:
        out.append(Violation("scenario", "x1 was assigned partitions with an instance id in use"))
    h.stop("c1")
    h.start("x1", instance_id=f"{h.group}-c1")
    h.await_all_members()
    h.await_valid_assignment(NUM_CONSUMERS, "after x1 took over c1's instance id")
    return out + finish(h)


def _fencing(stage: str):
    def run(h: Harness) -> list[Violation]:
        if stage == "stable" and h.group_protocol == "consumer":
            return _fencing_consumer_protocol_stable(h)
        # The replaced process may consume what its successor already committed before it is
        # told (Kafka's zombie window): its reads are judged after the run, not as they come.
        h.fail_fast = False
        h.produce_in_background()
        conflict = f"{h.group}-c1"
        if stage == "stable":
            for node in nodes():
                h.start(node, instance_id=f"{h.group}-{node}",
                        session_timeout_ms=STATIC_SESSION_TIMEOUT_MS)
            h.await_all_members()
            h.start("x1", instance_id=conflict, session_timeout_ms=STATIC_SESSION_TIMEOUT_MS)
        else:
            for node in [*nodes(), "x1"]:
                h.start(node, instance_id=conflict if node == "x1" else f"{h.group}-{node}",
                        session_timeout_ms=STATIC_SESSION_TIMEOUT_MS)
        # Kafka: the newest JoinGroup for an instance id replaces the member; the other process
        # is answered FENCED_INSTANCE_ID and must stop. Exactly one of c1/x1 survives.
        dead = h.wait_until("one of the two processes sharing an instance id to stop",
                            lambda: [n for n in ("c1", "x1") if not h.procs[n].running],
                            expect_running=("c2", "c3"))
        if len(dead) != 1:
            raise ScenarioFailed("both c1 and x1 stopped; one of them must keep consuming")
        h.procs[dead[0]].expected_exit = True
        h.fenced_nodes.add(dead[0])
        h.await_members(NUM_CONSUMERS)
        h.await_valid_assignment(NUM_CONSUMERS, f"after {dead[0]} was fenced")
        h.await_consumed()
        out = []
        if stage == "stable" and dead != ["c1"]:
            out.append(Violation("scenario", "the newcomer x1 was fenced; Kafka replaces the "
                                 "existing member and fences the old process (c1)"))
        ends = h.drain()
        h.stop_all()
        h.sync()
        # The fenced process's uncommitted records are redelivered to its successor; what the
        # zombie read after being replaced is not counted.
        return out + verdicts.no_loss(h.tracker, ends) + \
            verdicts.no_duplicates(h.tracker, excuse_failed_commits=True, ignore_nodes=dead)
    return run


for _stage in ("stable", "all"):
    _fn = _fencing(_stage)
    _fn.__doc__ = ("A second process with a live member's group.instance.id joins "
                   f"{'once the group is stable' if _stage == 'stable' else 'at the same time'}: "
                   "one of the two is fenced (FENCED_INSTANCE_ID) and stops, sends nothing more "
                   "with its member id, and the group keeps one member per instance id.")
    scenario(f"fencing_static_consumer_{_stage}",
             f"OffsetValidationTest.test_fencing_static_consumer(num_conflict_consumers=1, "
             f"fencing_stage={_stage})", needs=("static",))(_fn)


# The session timeout of consumer_failure's consumers (bench/bench_conformance.py sets 45 s, the
# Java client's default, to show that the kit does not wait it out).
FAILURE_SESSION_MS = SESSION_TIMEOUT_MS


def _consumer_failure(autocommit: bool):
    def run(h: Harness) -> list[Violation]:
        session_ms = _session_ms(h, FAILURE_SESSION_MS)
        for node in nodes():
            h.start(node, autocommit=autocommit, session_timeout_ms=session_ms)
        h.await_all_members()
        tp = h.all_partitions[0]
        owner = h.wait_until(f"an owner of {tp[0]}-{tp[1]}", lambda: h.sync().owner(tp))
        h.produce_in_background()
        h.await_consumed()
        killed = time.monotonic()
        h.stop(owner.name, clean=False)
        h.expire_sessions(NUM_CONSUMERS - 1, session_ms)
        h.await_members(NUM_CONSUMERS - 1)
        h.wait_until(f"{tp[0]}-{tp[1]} reassigned", lambda: h.sync().owner(tp))
        h.metrics["kill_to_reassigned_s"] = time.monotonic() - killed
        h.metrics["session_timeout_ms"] = session_ms
        h.await_valid_assignment(NUM_CONSUMERS - 1, f"after {owner.name} was killed")
        h.await_consumed()
        return finish(h, commits=not autocommit, duplicates="any")
    return run


for _auto in (False, True):
    _fn = _consumer_failure(_auto)
    _fn.__doc__ = ("Kill (SIGKILL) the owner of a partition; its session is expired by advancing "
                   "the emulator's clock to the session deadline, not by waiting; the partition "
                   f"moves to a survivor and nothing is lost ({'auto-commit' if _auto else 'manual commits'}).")
    scenario("consumer_failure" + ("_autocommit" if _auto else ""),
             f"OffsetValidationTest.test_consumer_failure(enable_autocommit={_auto})")(_fn)


def _rebalances(h: Harness) -> int:
    """Kafka's ``num_rebalances``: the most assignments any consumer has received."""
    return max((n.assigned_count for n in h.sync().nodes.values()), default=0)


def _unexpected_rebalances(h: Harness, before: int, what: str) -> list[Violation]:
    extra = _rebalances(h) - before
    return [Violation("scenario", f"{what} caused {extra} unexpected group rebalance(s)")] \
        if extra else []


@scenario("broker_rolling_bounce", "OffsetValidationTest.test_broker_rolling_bounce", **_CLUSTER)
def broker_rolling_bounce(h: Harness) -> list[Violation]:
    """Restart each of two brokers in turn (the group's coordinator moves to the other and
    back): the consumers find the coordinator again, the group sees no rebalance, and nothing
    is lost or read twice."""
    h.produce_in_background()
    for node in nodes():
        h.start(node, session_timeout_ms=30000)  # as Kafka's test: longer than a broker roll
    h.await_all_members()
    h.await_consumed()
    before = _rebalances(h)
    _roll_brokers(h)
    return _unexpected_rebalances(h, before, "the broker rolling bounce") + finish(h)


@scenario("broker_failure", "OffsetValidationTest.test_broker_failure", **_CLUSTER)
def broker_failure(h: Harness) -> list[Violation]:
    """Stop the broker coordinating the group for good: the partitions and the group move to
    the other broker, consumption goes on without a rebalance, nothing lost or read twice."""
    h.produce_in_background()
    for node in nodes():
        h.start(node, session_timeout_ms=30000)
    h.await_all_members()
    h.await_consumed()
    before = _rebalances(h)
    # Kafka's test kills nodes[0] and notes it cannot target the coordinator; here it can
    h.emu.stop_broker(h.emu.coordinator_of(h.group))
    h.await_consumed(200)
    return _unexpected_rebalances(h, before, "the broker failure") + finish(h)


# -- protocol error paths, injected as fault rules ---------------------------------------------

# A client that answers an injected error by rejoining under a fresh member id leaves its old
# id in the group until that session expires, and the rebalance waits for it (as on Kafka):
# fault scenarios use a short session so that wait stays short.
FAULT_SESSION_MS = 3000


def _fault_scenario(action: str, api: str, *, trigger: str, count: int = 1,
                    session_ms: int = FAULT_SESSION_MS,
                    on_consumer: tuple[str, dict[str, str]] | None = None, **params):
    """Two consumers consume steadily; the fault rule is added on the group; with
    ``trigger="rebalance"`` a third consumer joins so the group's Join/Sync/OffsetFetch run
    under the fault. The client must recover: all members joined again, a valid assignment,
    consumption going on, and at the end no loss and no duplicates except the records whose
    commit the fault made fail (at-least-once redelivers them)."""
    def run(h: Harness) -> list[Violation]:
        fault_api, fault_params = api, params
        if h.group_protocol == "consumer" and on_consumer is not None:
            fault_api, fault_params = on_consumer
        h.produce_in_background()
        members = ["c1", "c2"]
        for node in members:
            h.start(node, session_timeout_ms=session_ms)
        h.await_all_members()
        h.await_consumed()
        rule = h.add_fault(action, api=fault_api, group_id=h.group, count=count,
                           **fault_params)
        if trigger == "rebalance":
            members.append("c3")
            h.start("c3", session_timeout_ms=session_ms)
        h.await_fault(rule, count)
        h.await_all_members()
        h.await_valid_assignment(len(members), f"after {action} on {fault_api}")
        h.await_consumed()
        h.await_every_partition_committed_again()
        return finish(h, duplicates="uncommitted")
    return run


_FAULTS = [
    ("fault_rebalance_in_progress_on_commit", "error", "OffsetCommit", "steady",
     {"error": "REBALANCE_IN_PROGRESS"}, ("OffsetCommit answered REBALANCE_IN_PROGRESS: the "
     "client rejoins and goes on")),
    ("fault_illegal_generation_on_heartbeat", "error", "Heartbeat", "steady",
     {"error": "ILLEGAL_GENERATION"}, ("Heartbeat answered ILLEGAL_GENERATION: the member must "
     "rejoin before committing again")),
    ("fault_unknown_member_id_on_heartbeat", "error", "Heartbeat", "steady",
     {"error": "UNKNOWN_MEMBER_ID"}, ("Heartbeat answered UNKNOWN_MEMBER_ID: the member rejoins "
     "with a fresh member id")),
    ("fault_not_coordinator_on_heartbeat", "error", "Heartbeat", "steady",
     {"error": "NOT_COORDINATOR", "count": 2}, ("Heartbeats answered NOT_COORDINATOR: the client "
     "finds the coordinator again and stays in the group")),
    ("fault_coordinator_not_available_on_commit", "error", "OffsetCommit", "steady",
     {"error": "COORDINATOR_NOT_AVAILABLE"}, ("An OffsetCommit answered "
     "COORDINATOR_NOT_AVAILABLE: the client re-finds the coordinator; a failed commit is "
     "redelivered, never skipped")),
    ("fault_coordinator_load_in_progress_on_offset_fetch", "error", "OffsetFetch", "rebalance",
     {"error": "COORDINATOR_LOAD_IN_PROGRESS", "count": 2}, ("OffsetFetch answered "
     "COORDINATOR_LOAD_IN_PROGRESS after a rebalance: the client retries and resumes from the "
     "committed offsets (no reset to earliest or latest)")),
    ("fault_dropped_connection_mid_join", "close_before", "JoinGroup", "rebalance", {},
     "The connection drops as a JoinGroup arrives during a rebalance: the client reconnects and "
     "joins"),
    ("fault_delayed_sync_group", "delay", "SyncGroup", "rebalance", {"delay_ms": 2000},
     "A SyncGroup answered 2 s late: the group completes the rebalance and consumes on"),
]

# The same error paths on the consumer protocol (KIP-848): ConsumerGroupHeartbeat stands for
# Heartbeat and JoinGroup (a member joins and learns its assignment by heartbeating), with the
# errors Kafka answers it (FENCED_MEMBER_EPOCH where Heartbeat has ILLEGAL_GENERATION); a
# scenario named here with a reason has no counterpart and is skipped on that protocol.
_CGH = "ConsumerGroupHeartbeat"
NO_SYNC_GROUP = ("the consumer protocol has no SyncGroup (a member's assignment comes in its "
                 "heartbeat response)")
_ON_CONSUMER: dict[str, tuple[str, dict[str, str]] | str] = {
    # a consumer group never answers a commit REBALANCE_IN_PROGRESS; a commit whose member
    # epoch is behind the member's is answered STALE_MEMBER_EPOCH (ConsumerGroup.validateOffsetCommit)
    "fault_rebalance_in_progress_on_commit": ("OffsetCommit", {"error": "STALE_MEMBER_EPOCH"}),
    "fault_illegal_generation_on_heartbeat": (_CGH, {"error": "FENCED_MEMBER_EPOCH"}),
    "fault_unknown_member_id_on_heartbeat": (_CGH, {"error": "UNKNOWN_MEMBER_ID"}),
    "fault_not_coordinator_on_heartbeat": (_CGH, {"error": "NOT_COORDINATOR"}),
    "fault_dropped_connection_mid_join": (_CGH, {}),
    "fault_delayed_sync_group": NO_SYNC_GROUP,
}

for _name, _action, _api, _trigger, _params, _doc in _FAULTS:
    _params = dict(_params)
    _count = _params.pop("count", 1)
    _session = _params.pop("session_ms", FAULT_SESSION_MS)
    _consumer = _ON_CONSUMER.get(_name)
    _fn = _fault_scenario(_action, _api, trigger=_trigger, count=_count, session_ms=_session,
                          on_consumer=_consumer if isinstance(_consumer, tuple) else None,
                          **_params)
    _fn.__doc__ = _doc + (f" (consumer protocol: {_action} on {_consumer[0]}"
                          f"{' ' + _consumer[1]['error'] if _consumer[1] else ''})."
                          if isinstance(_consumer, tuple) else ".")
    scenario(_name, "(none: a protocol error path Kafka's system tests cannot provoke)",
             needs=("faults",),
             not_on={"consumer": _consumer} if isinstance(_consumer, str) else None)(_fn)

# Kafka's protocol-migration test (ConsumerProtocolMigrationTest), in a module of its own
from . import scenarios_migration  # noqa: E402,F401 (registers its scenarios)
# Kafka's share consumer test (ShareConsumerTest, KIP-932), in a module of its own
from . import share_scenarios  # noqa: E402,F401 (registers its scenarios)
