"""The kit's checks on hand-made event streams: each kind of wrong behaviour is caught, a clean
stream passes. Streams are written the way clients print them (contract.py), plus the kit's own
``kit_*`` events."""

from __future__ import annotations

import pytest

from kafka_emu.conformance import verdicts
from kafka_emu.conformance.record import RunLog, Tracker
from kafka_emu.errors import ErrorCode

T = "orders"
PARTS = [(T, 0), (T, 1)]


class Stream:
    """A little DSL: events with increasing client timestamps."""

    def __init__(self) -> None:
        self.log = RunLog()
        self.t = 1000

    def ev(self, node: str, name: str, life: int = 1, **fields):
        self.t += 10
        self.log.add(node, life, {"name": name, "timestamp": self.t, **fields})
        return self

    def kit(self, node: str, name: str, life: int = 1, **fields):
        self.t += 10
        self.log.add(node, life, {"name": f"kit_{name}", "timestamp": self.t, **fields})
        return self

    def start(self, node: str, life: int = 1, instance_id: str | None = None):
        self.kit(node, "started", life, instance_id=instance_id)
        return self.ev(node, "startup_complete", life)

    def assigned(self, node: str, *parts: int, life: int = 1):
        return self.ev(node, "partitions_assigned", life,
                       partitions=[{"topic": T, "partition": p} for p in parts])

    def revoked(self, node: str, *parts: int, life: int = 1):
        return self.ev(node, "partitions_revoked", life,
                       partitions=[{"topic": T, "partition": p} for p in parts])

    def consumed(self, node: str, part: int, lo: int, hi: int, life: int = 1, count=None):
        n = hi - lo + 1 if count is None else count
        return self.ev(node, "records_consumed", life, count=n, partitions=[
            {"topic": T, "partition": part, "count": n, "minOffset": lo, "maxOffset": hi}])

    def committed(self, node: str, part: int, offset: int, life: int = 1, success: bool = True):
        fields = {"offsets": [{"topic": T, "partition": part, "offset": offset}],
                  "success": success}
        if not success:
            fields["error"] = "REBALANCE_IN_PROGRESS"
        return self.ev(node, "offsets_committed", life, **fields)

    def stop(self, node: str, life: int = 1):
        self.ev(node, "shutdown_complete", life)
        return self.kit(node, "exited", life, code=0, clean=True)

    def checkpoint(self, label: str = "settled"):
        return self.kit("kit", "checkpoint", 0, label=label)

    def tracker(self) -> Tracker:
        t = Tracker()
        t.feed(self.log.snapshot())
        return t


def all_checks(s: Stream, log_end, *, static_nodes=(), baseline=None):
    t = s.tracker()
    out = verdicts.stream_rules(t) + verdicts.no_overlap(t) + \
        verdicts.valid_assignments(t, PARTS) + verdicts.no_loss(t, log_end) + \
        verdicts.no_duplicates(t) + verdicts.final_commits(t, log_end)
    if static_nodes:
        out += verdicts.revocations(t, static_nodes, baseline or {}, static=True)
    return out


def clean_handover() -> Stream:
    """c1 owns both partitions, c2 joins, c1 gives p1 away cleanly, both stop."""
    s = Stream().start("c1").assigned("c1", 0, 1).checkpoint("c1 alone")
    s.consumed("c1", 0, 0, 9).committed("c1", 0, 10).consumed("c1", 1, 0, 4).committed("c1", 1, 5)
    s.start("c2").revoked("c1", 0, 1).assigned("c1", 0).assigned("c2", 1).checkpoint("both")
    s.consumed("c1", 0, 10, 19).committed("c1", 0, 20).consumed("c2", 1, 5, 9).committed("c2", 1, 10)
    return s.stop("c1").stop("c2")


def rules(violations) -> set[str]:
    return {v.rule for v in violations}


def test_a_clean_stream_passes():
    assert all_checks(clean_handover(), {(T, 0): 20, (T, 1): 10}) == []


def test_a_lost_record_is_caught():
    # the log holds 21 records in p0 but nobody consumed offset 20
    violations = all_checks(clean_handover(), {(T, 0): 21, (T, 1): 10})
    assert rules(violations) == {"lost-records", "final-commit-mismatch"}
    assert "offsets 20..20" in str(violations[0])


def test_a_gap_inside_the_stream_is_caught_as_loss():
    s = Stream().start("c1").assigned("c1", 0, 1)
    s.consumed("c1", 0, 0, 4).committed("c1", 0, 5)
    # a second consumer resumes from 8: records 5..7 were skipped
    s.revoked("c1", 0, 1).assigned("c1", 1).start("c2").assigned("c2", 0)
    s.consumed("c2", 0, 8, 9).committed("c2", 0, 10).stop("c1").stop("c2")
    assert "lost-records" in rules(verdicts.no_loss(s.tracker(), {(T, 0): 10}))


def test_a_duplicate_is_caught():
    s = Stream().start("c1").assigned("c1", 0)
    s.consumed("c1", 0, 0, 9)  # consumed, but the commit never came
    s.revoked("c1", 0).stop("c1")
    s.start("c2").assigned("c2", 0).consumed("c2", 0, 0, 9).committed("c2", 0, 10).stop("c2")
    violations = verdicts.no_duplicates(s.tracker())
    assert rules(violations) == {"duplicate-records"}
    assert "10 duplicate(s)" in str(violations[0])


def test_a_duplicate_of_a_failed_commit_is_excused_only_when_asked():
    s = Stream().start("c1").assigned("c1", 0)
    s.consumed("c1", 0, 0, 9).committed("c1", 0, 10, success=False)
    s.revoked("c1", 0).assigned("c1", 0).consumed("c1", 0, 0, 9).committed("c1", 0, 10).stop("c1")
    t = s.tracker()
    assert rules(verdicts.no_duplicates(t)) == {"duplicate-records"}
    assert verdicts.no_duplicates(t, excuse_failed_commits=True) == []


def test_redelivering_a_committed_record_is_caught():
    s = Stream().start("c1").assigned("c1", 0).consumed("c1", 0, 0, 9).committed("c1", 0, 10)
    s.revoked("c1", 0).stop("c1")
    s.start("c2").assigned("c2", 0).consumed("c2", 0, 5, 12).committed("c2", 0, 13).stop("c2")
    assert "consumed-behind-commit" in rules(s.tracker().violations)


def test_an_overlapping_assignment_is_caught():
    s = Stream().start("c1").assigned("c1", 0, 1).start("c2")
    s.assigned("c2", 1)  # c2 got p1 while c1 never revoked it
    s.checkpoint("after c2 joined")
    violations = verdicts.no_overlap(s.tracker()) + verdicts.valid_assignments(s.tracker(), PARTS)
    assert rules(violations) == {"overlapping-assignment", "invalid-assignment"}
    assert any("assigned to both c1 and c2" in str(v) for v in violations)


def test_an_ownership_ending_after_the_successor_started_is_an_overlap():
    s = Stream().start("c1").assigned("c1", 0).start("c2")
    s.assigned("c2", 0).revoked("c1", 0)  # revoked 10 ms too late
    assert rules(verdicts.no_overlap(s.tracker())) == {"overlapping-assignment"}


def test_a_killed_owner_releases_its_partitions_at_the_kill():
    s = Stream().start("c1").assigned("c1", 0).start("c2").assigned("c2", 1)
    s.kit("c1", "killed").assigned("c2", 0, 1).checkpoint()
    t = s.tracker()
    assert verdicts.no_overlap(t) == [] and verdicts.valid_assignments(t, PARTS) == []


def test_an_uncovered_partition_at_a_checkpoint_is_caught():
    s = Stream().start("c1").assigned("c1", 0).checkpoint("p1 forgotten")
    violations = verdicts.valid_assignments(s.tracker(), PARTS)
    assert rules(violations) == {"invalid-assignment"}
    assert "orders-1" in str(violations[0])


def test_a_revoked_static_member_is_caught():
    s = Stream().start("c1", instance_id="i1").assigned("c1", 0).start("c2", instance_id="i2")
    baseline = {"c1": s.tracker().node("c1").revoked_count}
    s.revoked("c1", 0).assigned("c1", 0)  # a rebalance the static bounce should not cause
    violations = verdicts.revocations(s.tracker(), ["c1"], baseline, static=True)
    assert rules(violations) == {"static-member-revoked"}
    # the same stream is what a dynamic group must show
    assert verdicts.revocations(s.tracker(), ["c1"], baseline, static=False) == []


def test_a_dynamic_member_that_never_revokes_is_caught():
    s = Stream().start("c1").assigned("c1", 0)
    violations = verdicts.revocations(s.tracker(), ["c1"], {}, static=False)
    assert rules(violations) == {"dynamic-member-not-revoked"}


def test_committing_records_not_consumed_is_caught():
    s = Stream().start("c1").assigned("c1", 0).consumed("c1", 0, 0, 4).committed("c1", 0, 50)
    violations = s.tracker().violations
    assert rules(violations) == {"commit-ahead-of-position"}
    assert "5..49" in str(violations[0])


def test_consuming_an_unassigned_partition_or_while_not_joined_is_caught():
    s = Stream().start("c1").consumed("c1", 0, 0, 4)
    assert rules(s.tracker().violations) == {"consumed-while-not-joined",
                                             "consumed-unassigned-partition"}


def test_the_events_of_other_processes_and_non_contract_lines_do_not_disturb():
    s = clean_handover()
    s.log.add("c3", 1, {"name": "tool_data", "sent": 1})
    assert all_checks(s, {(T, 0): 20, (T, 1): 10}) == []


# -- server-side rules (timeline entries as Emulator.timeline() returns them) ----------------

class Timeline:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def add(self, type_: str, **fields):
        self.events.append({"seq": len(self.events) + 1, "type": type_, "group_id": "g",
                            **fields})
        return self

    def request(self, api, member, *, error=0, generation=3, at=0, latency=1.0, client="c1.1",
                connection=1):
        return self.add("RequestHandled", api=api, member_id=member, error_code=error,
                        generation_id=generation, at_ms=at, latency_ms=latency, client_id=client,
                        connection_id=connection)

    def rules(self, **kw) -> set[str]:
        return rules(verdicts.server_rules(self.events, group_id="g", **kw))


def test_server_rules_accept_a_member_that_rejoins_after_illegal_generation():
    tl = Timeline().request("Heartbeat", "m1", error=ErrorCode.ILLEGAL_GENERATION, at=100)
    tl.request("JoinGroup", "m1", at=300, latency=150).request("OffsetCommit", "m1",
                                                                generation=4, at=400)
    assert tl.rules() == set()


def test_server_rules_catch_a_commit_with_a_generation_the_member_was_told_is_gone():
    tl = Timeline().request("Heartbeat", "m1", error=ErrorCode.ILLEGAL_GENERATION, at=100)
    tl.request("OffsetCommit", "m1", at=200)
    assert tl.rules() == {"stale-generation-after-told"}


def test_server_rules_catch_a_heartbeat_after_a_fault_said_unknown_member():
    tl = Timeline().add("FaultFired", member_id="m1", error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                        at_ms=100)
    tl.request("Heartbeat", "m1", at=400)
    assert tl.rules() == {"stale-generation-after-told"}


def test_server_rules_forgive_a_request_already_in_flight_when_told():
    tl = Timeline().request("Heartbeat", "m1", error=ErrorCode.ILLEGAL_GENERATION, at=100)
    tl.request("OffsetCommit", "m1", at=105, latency=10)
    assert tl.rules() == set()


def test_server_rules_catch_requests_after_fencing():
    tl = Timeline().request("Heartbeat", "m1", error=ErrorCode.FENCED_INSTANCE_ID, at=100)
    tl.request("OffsetCommit", "m1", error=ErrorCode.FENCED_INSTANCE_ID, at=500)
    assert tl.rules() == {"request-after-fencing"}


@pytest.mark.parametrize("closed,expected", [(False, {"no-rejoin-within-rebalance-timeout"}),
                                             (True, set())])
def test_server_rules_catch_a_connected_member_removed_for_not_rejoining(closed, expected):
    tl = Timeline().add("MemberAdded", member_id="m1", client_id="c1.1")
    tl.request("Heartbeat", "m1", at=10, connection=7)
    if closed:  # the client was killed: its connection went first
        tl.add("ConnectionClosed", connection_id=7, group_id=None)
    tl.add("MemberRemoved", member_id="m1", reason="rebalance_timeout")
    assert tl.rules() == expected


def test_server_rules_catch_a_generation_whose_assignment_overlaps_or_leaves_a_partition_out():
    tl = Timeline().add("AssignmentsDistributed", generation=5, decoded_assignments={
        "m1": {"partitions": {T: [0]}}, "m2": {"partitions": {T: [0]}}})
    found = verdicts.server_rules(tl.events, group_id="g", partitions=PARTS)
    assert rules(found) == {"invalid-assignment"}
    assert {"generation 5: orders-0 assigned to members m1 and m2",
            "generation 5: [orders-1] assigned to no member"} <= {v.message for v in found}


def test_server_rules_accept_a_valid_generation():
    tl = Timeline().add("AssignmentsDistributed", generation=5, decoded_assignments={
        "m1": {"partitions": {T: [0]}}, "m2": {"partitions": {T: [1]}}})
    assert verdicts.server_rules(tl.events, group_id="g", partitions=PARTS) == []


def test_every_rule_is_documented():
    produced = {"consumed-while-not-joined", "consumed-unassigned-partition",
                "consumed-out-of-order", "consumed-behind-commit",
                "committed-unassigned-partition", "commit-ahead-of-position"}
    assert produced <= set(verdicts.RULES)


def _rdkafka_line(s: Stream, node: str, total: int, lo: int, hi: int) -> None:
    # librdkafka's kafkatest_verifiable_client: the range form, with its running count
    s.ev(node, "records_consumed", count=hi - lo + 1, _totcount=total, partitions=[
        {"topic": T, "partition": 0, "minOffset": lo, "maxOffset": hi}])


def test_a_line_printed_twice_with_the_running_count_unchanged_is_not_a_re_read():
    # its SIGTERM handler flushes the line the main thread is flushing (seen in CI: consumed
    # from 255, expected 305): the same line, _totcount unchanged
    s = Stream().start("c1").assigned("c1", 0)
    _rdkafka_line(s, "c1", 10, 0, 9)
    _rdkafka_line(s, "c1", 20, 10, 19)
    _rdkafka_line(s, "c1", 20, 10, 19)
    t = s.committed("c1", 0, 20).stop("c1").tracker()
    assert t.violations == [] and t.repeated_lines == 1
    assert verdicts.no_duplicates(t) == []


def test_a_re_read_with_the_running_count_moved_is_still_caught():
    s = Stream().start("c1").assigned("c1", 0)
    _rdkafka_line(s, "c1", 10, 0, 9)
    _rdkafka_line(s, "c1", 20, 0, 9)  # read again: the count moved, so it is a real read
    t = s.stop("c1").tracker()
    assert rules(t.violations) == {"consumed-out-of-order"} and t.repeated_lines == 0
