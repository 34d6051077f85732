"""The scenario catalogue against the kit's own verifiable clients, over real sockets.

The whole catalogue runs with confluent-kafka, on the classic protocol and on the consumer
protocol (KIP-848: what Kafka's consumer_test.py runs there; the rest is skipped, naming why);
every other built-in client runs one scenario
here (consumer_failure: hard kill, session expiry, reassignment) to prove its program speaks the
contract. Their full catalogues are in ``bench/bench_conformance.py`` (``make bench``), which
also prints the client x scenario matrix.
"""

from __future__ import annotations

import os
import shutil

import pytest

from kafka_emu.conformance import runner
from kafka_emu.conformance.clients import built_in
from kafka_emu.conformance.scenarios import CATALOGUE

# the share scenarios (ShareConsumerTest) run in test_share_catalogue.py
CONSUMER = [name for name, sc in CATALOGUE.items() if sc.kind == "consumer"]


def _client(name: str):
    if name == "kafkajs" and shutil.which("node") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI must provide Node.js for the kafkajs verifiable client")
        pytest.skip("Node.js is not installed")
    return built_in(name)


@pytest.fixture(scope="module")
def confluent():
    return _client("confluent-kafka")


def check(result) -> None:
    """A client bug found by the kit (ClientSpec.known_bugs, with its evidence) is an expected
    failure, not hidden: the reason names it."""
    if result.verdict == runner.FAIL and result.reason.startswith(
            (f"known {result.client} bug", "known kafka-emu gap")):
        pytest.xfail(result.reason)
    if result.verdict == runner.SKIP:
        pytest.skip(result.reason)
    assert result.verdict == runner.PASS, result.reason


@pytest.mark.parametrize("name", CONSUMER)
def test_confluent_kafka_passes_the_catalogue(confluent, name):
    check(runner.run_scenario(CATALOGUE[name], confluent))


@pytest.mark.parametrize("name", CONSUMER)
def test_confluent_kafka_passes_the_catalogue_on_the_consumer_protocol(confluent, name):
    check(runner.run_scenario(CATALOGUE[name], confluent, group_protocol="consumer"))


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka", "kafkajs"])
def test_each_other_client_passes_consumer_failure(client):
    check(runner.run_scenario(CATALOGUE["consumer_failure"], _client(client)))


def test_a_scenario_needing_static_membership_is_skipped_for_kafkajs_with_the_reason():
    result = runner.run_scenario(CATALOGUE["fencing_static_consumer_stable"], _client("kafkajs"))
    assert result.verdict == runner.SKIP
    assert "static membership" in result.reason
