"""Fault rules without a server: validation, matching and triggers (control/faults.py)."""

from __future__ import annotations

import pytest

from kafka_emu.control.faults import (FaultRules, api_key_of, error_code_of, request_groups,
                                      request_members, request_topics, rule_spec)
from kafka_emu.control.operations import ControlError, all_operations, parse_params
from kafka_emu.errors import ErrorCode
from kafka_emu.protocol.messages import delete_groups as dlg
from kafka_emu.protocol.messages import describe_groups as dg
from kafka_emu.protocol.messages import find_coordinator as fc
from kafka_emu.protocol.messages import heartbeat as hb
from kafka_emu.protocol.messages import leave_group as lg
from kafka_emu.protocol.messages import metadata as md
from kafka_emu.protocol.messages import offset_commit as oc
from kafka_emu.protocol.messages import offset_fetch as of
from kafka_emu.protocol.messages import produce as pr


class FakeBroker:
    def __init__(self):
        self.faults = None
        self.fault_rules = None


def rules(*specs):
    broker = FakeBroker()
    store = FaultRules(broker)
    for spec in specs:
        store.add(**rule_spec(**spec))
    return broker, store


def commit(group="g", member="m1", topic="t", instance=None):
    return oc.OffsetCommitRequest(group_id=group, member_id=member, group_instance_id=instance,
                                  topics=[oc.OffsetCommitRequestTopic(name=topic, partitions=[
                                      oc.OffsetCommitRequestPartition(partition_index=0)])])


OC = 8


def fires(store, request=None, api=OC, version=8, client_id="c"):
    return store.match(api, version, client_id, request if request is not None else commit())


# -- validation -------------------------------------------------------------------------------

def test_names_and_numbers_are_both_accepted():
    assert api_key_of("OffsetCommit") == api_key_of("offsetcommit") == api_key_of(8)
    assert api_key_of("8") == 8
    assert error_code_of("REBALANCE_IN_PROGRESS") == error_code_of(27) == error_code_of("27")
    assert error_code_of("rebalance_in_progress") is ErrorCode.REBALANCE_IN_PROGRESS
    assert error_code_of(-1) is ErrorCode.UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize("spec,problem", [
    (dict(action="error", api="NoSuchApi", error=27), "unknown api"),
    (dict(action="error", api=999, error=27), "unknown api key"),
    (dict(action="error", error="NOT_A_CODE"), "unknown error code"),
    (dict(action="error", error=12345), "unknown error code"),
    (dict(action="error"), "needs error"),
    (dict(action="delay", delay_ms=-1), "delay_ms must be >= 0"),
    (dict(action="delay"), "needs delay_ms"),
    (dict(action="throttle", throttle_ms=-5), "throttle_ms must be >= 0"),
    (dict(action="explode"), "unknown action"),
    (dict(action="blackhole", count=0), "count must be >= 1"),
    (dict(action="blackhole", skip=-1), "skip must be >= 0"),
    (dict(action="blackhole", probability=1.5), "probability"),
    (dict(action="blackhole", min_version=5, max_version=2), "above max_version"),
    (dict(action="close_before", delay_ms=3), "do not apply"),
    (dict(action="delay", delay_ms=3, error=27), "belong to action error"),
])
def test_bad_rules_are_refused_and_nothing_is_added(spec, problem):
    broker, store = rules()
    with pytest.raises(ControlError) as info:
        store.add(**rule_spec(**spec))
    assert problem in info.value.message
    assert info.value.status == 400
    assert store.rules == {} and broker.faults is None


def test_the_operation_refuses_bad_input_before_changing_anything():
    broker = FakeBroker()
    ops = all_operations()
    op = ops["add_fault"]
    with pytest.raises(ControlError):
        op.run(broker, parse_params(op, {"action": "delay", "delay_ms": -3}))
    with pytest.raises(ControlError):
        parse_params(op, {"action": "delay", "delay_ms": "soon"})
    assert ops["list_faults"].run(broker, None) == []
    rule = op.run(broker, parse_params(op, {"action": "error", "api": "8", "error": "27"}))
    assert rule["error"] == "REBALANCE_IN_PROGRESS" and rule["match"] == {"api": "OffsetCommit"}
    with pytest.raises(ControlError) as info:
        ops["remove_fault"].run(broker, parse_params(ops["remove_fault"], {"rule_id": 99}))
    assert info.value.status == 404
    assert [r["id"] for r in ops["list_faults"].run(broker, None)] == [rule["id"]]


# -- matching ---------------------------------------------------------------------------------

def test_match_on_api_version_client_group_member_topic():
    _, store = rules(dict(action="error", error=27, api="OffsetCommit", min_version=7,
                          max_version=8, client_id="app-*", group_id="g", member_id="m1",
                          topic="t", always=True))
    assert fires(store, client_id="app-1") is not None
    assert fires(store, client_id="other") is None
    assert fires(store, version=6, client_id="app-1") is None
    assert fires(store, version=9, client_id="app-1") is None
    assert fires(store, commit(group="h"), client_id="app-1") is None
    assert fires(store, commit(member="m2"), client_id="app-1") is None
    assert fires(store, commit(topic="u"), client_id="app-1") is None
    assert fires(store, hb.HeartbeatRequest(group_id="g", member_id="m1"), api=12,
                 client_id="app-1") is None


def test_member_matches_member_id_or_instance_id_and_leave_group_members():
    _, store = rules(dict(action="close_before", member_id="static-1", always=True))
    assert fires(store, commit(member="x", instance="static-1")) is not None
    leave = lg.LeaveGroupRequest(group_id="g", members=[
        lg.MemberIdentity(member_id="", group_instance_id="static-1")])
    assert request_members(leave) == {"static-1"}
    assert fires(store, leave, api=13, version=4) is not None


def test_what_requests_name():
    assert request_groups(fc.FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b"])) \
        == {"a", "b"}
    assert request_groups(fc.FindCoordinatorRequest(key_type=1, coordinator_keys=["txn"])) \
        == set()
    assert request_groups(fc.FindCoordinatorRequest(key="g")) == {"g"}
    assert request_groups(dg.DescribeGroupsRequest(groups=["x", "y"])) == {"x", "y"}
    assert request_groups(dlg.DeleteGroupsRequest(groups_names=["z"])) == {"z"}
    assert request_groups(of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(
        group_id="q", topics=[of.OffsetFetchRequestTopics(name="t9")])])) == {"q"}
    assert request_topics(of.OffsetFetchRequest(groups=[of.OffsetFetchRequestGroup(
        group_id="q", topics=[of.OffsetFetchRequestTopics(name="t9")])])) == {"t9"}
    assert request_topics(pr.ProduceRequest(topic_data=[pr.TopicProduceData(name="p")])) == {"p"}
    assert request_topics(md.MetadataRequest(topics=None)) == set()
    assert request_topics(md.MetadataRequest(topics=[md.MetadataRequestTopic(name="m")])) \
        == {"m"}


def test_first_matching_rule_in_order_wins():
    _, store = rules(dict(action="error", error=27, api=OC),
                     dict(action="close_before", api=OC, always=True))
    assert fires(store).action == "error"
    assert fires(store).action == "close_before"


# -- triggers ---------------------------------------------------------------------------------

def test_next_n_matches_after_skipping_k_then_the_rule_goes_quiet():
    broker, store = rules(dict(action="error", error=27, count=2, skip=3))
    assert broker.faults is store
    pattern = [fires(store) is not None for _ in range(8)]
    assert pattern == [False, False, False, True, True, False, False, False]
    (rule,) = store.rules.values()
    assert (rule.matched, rule.fired, rule.exhausted) == (5, 2, True)
    assert broker.faults is None  # the hot path is back to one attribute check
    assert rule.describe()["active"] is False


def test_always_keeps_firing():
    _, store = rules(dict(action="error", error=27, always=True))
    assert all(fires(store) for _ in range(50))


def test_probability_is_deterministic_under_a_seed():
    def run(seed):
        _, store = rules(dict(action="error", error=27, always=True, probability=0.3, seed=seed))
        return [fires(store) is not None for _ in range(200)]
    first, again, other = run(7), run(7), run(8)
    assert first == again
    assert first != other
    assert 30 < sum(first) < 90  # about 60 of 200


def test_listed_rules_are_json():
    import json
    _, store = rules(dict(action="error", error=27, api="Heartbeat", always=True,
                          probability=0.5, seed=3), dict(action="throttle", throttle_ms=100))
    listed = json.loads(json.dumps([r.describe() for r in store.rules.values()]))
    assert listed[0]["error"] == "REBALANCE_IN_PROGRESS" and listed[0]["count"] is None
    assert listed[0]["seed"] == 3 and listed[1]["throttle_ms"] == 100


def test_remove_and_clear():
    broker, store = rules(dict(action="error", error=27), dict(action="blackhole"))
    store.remove(1)
    assert list(store.rules) == [2] and broker.faults is store
    with pytest.raises(ControlError):
        store.remove(1)
    assert store.clear() == 1
    assert store.rules == {} and broker.faults is None
    assert store.add(**rule_spec(action="blackhole")).id == 3  # ids are never reused


def test_an_api_key_of_thousands_of_digits_is_unknown_not_an_internal_error():
    # GET /timeline/requests?api=<5000 digits> was a 500: int() refuses over 4300 digits
    with pytest.raises(ControlError, match="unknown api key 111111111111..."):
        api_key_of("1" * 5000)
    with pytest.raises(ControlError, match="unknown api"):
        api_key_of("²")  # a Unicode digit int() refuses
