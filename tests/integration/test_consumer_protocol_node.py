"""@platformatic/kafka with groupProtocol 'consumer' (KIP-848) against kafka-emu: the second real
client of the new protocol after librdkafka. kafkajs 2.2.4 has no KIP-848 support (no
ConsumerGroupHeartbeat among its API keys), so it is not run here."""

from __future__ import annotations

from kafka_emu.broker.events import RequestHandled

from .test_node_clients import TOPICS, run_scenario  # node_modules: tests/conftest.py


def test_platformatic_consumer_protocol_members_split_and_take_over(kafka_emu_factory,
                                                                    node_modules):  # noqa: F811
    requests: list[tuple[str, int]] = []
    emu = kafka_emu_factory(topics=TOPICS, observer=lambda e: requests.append((e.api, e.version))
                            if isinstance(e, RequestHandled) else None)
    result = run_scenario("platformatic", "group848", emu)
    before, after, leaver = result["before"], result["after"], result["leaver"]
    assert len(before) == 3 and sorted(p for ps in before.values() for p in ps) == list(range(6))
    assert leaver in before and set(after) == set(before) - {leaver}
    assert sorted(p for ps in after.values() for p in ps) == list(range(6)), after
    assert result["overlaps"] == 0
    apis = {a for a, _ in requests}
    assert "ConsumerGroupHeartbeat" in apis and "JoinGroup" not in apis
    d = emu.describe_consumer_group(result["group"])
    assert d.error == 0 and d.state == "Empty"
