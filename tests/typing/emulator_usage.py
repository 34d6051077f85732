"""What a user's type checker sees of the public API: checked by mypy --strict in make test
(tests/test_static_checks.py; this directory is in [tool.mypy] files), never run. Each
``assert_type`` fails the check if a method's declared type drifts (or decays to ``Any``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from typing_extensions import assert_type

from kafka_emu.control.results import (Advanced, AdvancedToDeadline, BrokerInfo, Clock,
                                       CoordinatorMoved, Deadline, Event, FaultRule, GroupSummary,
                                       GroupView, MemberGone, OffsetsSet, OperatorDone,
                                       PartitionInfo, PartitionOffsets)
from kafka_emu.coordinator.consumer.commands import DescribedConsumerGroup
from kafka_emu.coordinator.results import DescribedGroup, ListedGroup
from kafka_emu.coordinator.share.commands import DescribedShareGroup
from kafka_emu.testing import AsyncEmulator, Emulator, make_config, open_emulator, run_in_thread


def thread_handle(emu: Emulator) -> None:
    assert_type(emu.bootstrap_servers, str)
    assert_type(emu.list_groups(states="Stable"), tuple[ListedGroup, ...])
    assert_type(emu.describe_group("g"), DescribedGroup)
    assert_type(emu.describe_consumer_group("g"), DescribedConsumerGroup)
    assert_type(emu.describe_share_group("g"), DescribedShareGroup)
    assert_type(emu.create_topic("orders", 3), None)
    assert_type(emu.reset(), tuple[str, ...])

    advanced = emu.advance(45_000)
    assert_type(advanced, Advanced)
    assert_type(advanced["members_expired"], list[MemberGone])
    assert_type(advanced["rebalances_started"][0]["reason"], str)
    assert_type(advanced["groups_deleted"][0]["group_id"], str)
    assert_type(advanced["now_ms"], int)
    assert_type(emu.advance_to_next_deadline("g", kind="session"), AdvancedToDeadline)
    assert_type(emu.advance_to_next_deadline()["deadline"], Deadline)
    assert_type(emu.deadlines(), list[Deadline])
    assert_type(emu.clock(), Clock)

    assert_type(emu.groups(), list[GroupSummary])
    view = emu.group_view("g")
    assert_type(view, GroupView)
    assert_type(view["offsets"][0]["lag"], int | None)
    assert_type(view["members"][0]["is_leader"], bool)
    assert_type(emu.expire_member("g", "m"), OperatorDone)
    assert_type(emu.ignore_heartbeats("g", group_instance_id="i"), OperatorDone)
    assert_type(emu.trigger_rebalance("g"), OperatorDone)
    assert_type(emu.remove_static_member("g", "i"), OperatorDone)
    assert_type(emu.delete_group("g", force=True), OperatorDone)
    assert_type(emu.committed_offsets("g"), list[PartitionOffsets])
    assert_type(emu.set_offsets("g", {("orders", 0): 42}), OffsetsSet)

    assert_type(emu.timeline(group_id="g", types=("MemberRemoved",)), list[Event])
    assert_type(emu.requests(api="Heartbeat"), list[Event])
    assert_type(emu.timeline_seq(), int)
    assert_type(emu.wait_for_group("g", members=2), GroupView)
    assert_type(emu.wait_for(lambda: emu.describe_group("g").state == "Stable"), bool)

    assert_type(emu.add_fault("error", api="Heartbeat", error="REBALANCE_IN_PROGRESS"), int)
    assert_type(emu.faults(), list[FaultRule])
    assert_type(emu.remove_fault(1), FaultRule)
    assert_type(emu.clear_faults(), int)
    assert_type(emu.unexpected_errors(), list[BaseException])

    assert_type(emu.brokers(), list[BrokerInfo])
    assert_type(emu.stop_broker(2), BrokerInfo)
    assert_type(emu.partition("orders", 0), PartitionInfo)
    assert_type(emu.move_leader("orders", 0, to=2), PartitionInfo)
    assert_type(emu.coordinator_of("g"), int)
    assert_type(emu.move_coordinator("g", 2), CoordinatorMoved)
    assert_type(emu.elect_preferred_leaders(), int)


async def trio_handle(emu: AsyncEmulator) -> None:
    assert_type(await emu.advance(45_000), Advanced)
    assert_type(await emu.group_view("g"), GroupView)
    assert_type(await emu.list_groups(), tuple[ListedGroup, ...])
    assert_type(await emu.describe_group("g"), DescribedGroup)
    assert_type(await emu.wait_for_group("g"), GroupView)
    assert_type(await emu.add_fault("delay", delay_ms=100), int)
    assert_type(await emu.faults(), list[FaultRule])
    assert_type(await emu.timeline(), list[Event])
    assert_type(await emu.reset(), tuple[str, ...])
    assert_type(await emu.wait_for(lambda: True), bool)


async def runners() -> None:
    with run_in_thread(make_config(topics={"orders": 3})) as emu:
        assert_type(emu, Emulator)
    async with open_emulator() as async_emu:
        assert_type(async_emu, AsyncEmulator)


def unbound_method_is_still_a_method() -> None:
    advance: Callable[[int], Advanced] = run_in_thread().__enter__().advance
    assert_type(advance(1)["advanced_ms"], int)


def read_from_the_class(emu: Emulator, async_emu: AsyncEmulator) -> None:
    assert_type(Emulator.advance(emu, 1), Advanced)
    assert_type(AsyncEmulator.group_view(async_emu, "g"), Awaitable[GroupView])
