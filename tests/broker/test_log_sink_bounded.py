"""Group log lines stay bounded however many groups come and go (issue #33: 100,000 abandoned
groups wrote 110 MB of INFO, about seven lines each): the broker's one line limiter
(log_limits.allow, as for connection warnings) lets GROUP_LINES_PER_SECOND through per second and
the next line that passes counts what was suppressed. The limiter's clock is replaced by one the
test moves, so what passes does not depend on the machine's speed."""

from __future__ import annotations

import logging

import pytest

from kafka_emu.admin.connection import BrokerConnection
from kafka_emu.broker import log_limits, log_sink
from kafka_emu.broker.log_sink import GROUP_LINES_PER_SECOND, LogSink, attach_log_sink
from kafka_emu.coordinator.events import (GenerationChanged, GroupDeleted, MemberAdded,
                                          MemberRemoved, RebalanceTriggered, RemovalReason)
from kafka_emu.protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from kafka_emu.testing import make_config, run_in_thread

from test_log_sink import join_and_sync, lines  # tests/broker is on sys.path (rootdir-less)


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, frozen until the test moves it; the limiter starts fresh."""
    now = [1000.0]
    monkeypatch.setattr(log_limits, "_clock", lambda: now[0])
    for table in ("_last", "_sent", "_held"):
        monkeypatch.setattr(log_limits, table, {})
    return now


def abandoned_group(group: str) -> list:
    """The seven events of a group a member joins, then leaves by expiring, then retention deletes."""
    return [
        MemberAdded(at_ms=0, group_id=group, member_id="m", group_instance_id=None, client_id="c"),
        RebalanceTriggered(at_ms=0, group_id=group, reason="adding new member m"),
        GenerationChanged(at_ms=0, group_id=group, generation=1, protocol_name="range",
                          leader="m", members=("m",)),
        MemberRemoved(at_ms=0, group_id=group, member_id="m", group_instance_id=None,
                      reason=RemovalReason.SESSION_EXPIRED),
        RebalanceTriggered(at_ms=0, group_id=group, reason="removing member m"),
        GenerationChanged(at_ms=0, group_id=group, generation=2, protocol_name=None, leader=None),
        GroupDeleted(at_ms=0, group_id=group, reason="retention"),
    ]


def test_many_abandoned_groups_write_a_bounded_number_of_lines(caplog, clock):
    caplog.set_level(logging.INFO, logger="kafka_emu")
    sink = LogSink()
    for i in range(10_000):
        for event in abandoned_group(f"g{i}"):
            sink(event)
    written = lines(caplog, "kafka_emu.groups")
    assert len(written) == GROUP_LINES_PER_SECOND  # of 70,000
    assert written[0] == "group g0: member m joined (client c)"  # the first ones, unchanged
    clock[0] += 1.0
    caplog.clear()
    sink(GroupDeleted(at_ms=0, group_id="last", reason="retention"))
    [record] = caplog.records
    suppressed = 70_000 - GROUP_LINES_PER_SECOND
    assert record.getMessage() == (
        f"group last: deleted (retention) ({suppressed} group log lines suppressed before this one)")
    assert record.kafka["suppressed"] == suppressed


def test_a_few_groups_keep_every_line(caplog, clock):
    caplog.set_level(logging.INFO, logger="kafka_emu")
    sink = LogSink()
    for i in range(GROUP_LINES_PER_SECOND // 7):
        for event in abandoned_group(f"g{i}"):
            sink(event)
    assert len(lines(caplog, "kafka_emu.groups")) == GROUP_LINES_PER_SECOND // 7 * 7


def test_group_lines_of_a_real_broker_are_bounded(caplog, clock, monkeypatch):
    caplog.set_level(logging.INFO, logger="kafka_emu")
    monkeypatch.setattr(log_sink, "GROUP_LINES_PER_SECOND", 50)
    groups = 60  # each writes at least four lines: joined, rebalance, generation, left
    config = make_config({"group.initial.rebalance.delay.ms": 0})
    with run_in_thread(config) as emu, BrokerConnection(emu.host, emu.port) as conn:
        assert emu._call(lambda: attach_log_sink(emu.broker)) is not None
        for i in range(groups):
            member = join_and_sync(conn, f"g{i}", 30_000)
            conn.request("LeaveGroup", lambda v, g=f"g{i}", m=member: LeaveGroupRequest(
                group_id=g, members=[MemberIdentity(member_id=m)]) if v >= 3 else
                LeaveGroupRequest(group_id=g, member_id=m))
        assert emu.describe_group(f"g{groups - 1}").state == "Empty"
    assert len(lines(caplog, "kafka_emu.groups")) == 50
    assert log_limits._held["group events"] >= 4 * groups - 50
