"""The kit's own verifiable clients, selectable with ``--client NAME``.

Each is a small program speaking the contract in ``conformance/contract.py``:
``python -m kafka_emu.conformance.clients.<module> --consumer|--producer ...`` for the Python
libraries, a Node script for kafkajs (``node.py`` finds Node and installs kafkajs in a cache).
A :class:`ClientSpec` says how to start one and what it cannot do (kafkajs has no static
membership), so the scenarios that need that skip with the reason instead of failing.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from collections.abc import Callable

import attrs

from ..profiles import BUILT_IN as PROFILES
from ..profiles import Profile


@attrs.frozen(kw_only=True)
class ClientSpec:
    """How to run a verifiable client: the consumer and producer commands (argv lists; the kit
    appends the contract's flags), its profile (how it takes flags and properties,
    ``profiles.py``), and what it cannot do (a capability -> why; scenarios needing one are
    skipped naming it; the profile's ``lacks`` are included)."""

    name: str
    consumer: tuple[str, ...]
    producer: tuple[str, ...] | None = None
    profile: Profile = PROFILES["kafka-emu"]
    unsupported: dict[str, str] = attrs.field(factory=dict)
    library_version: str | None = None
    # scenario -> the client bug that makes it fail, with its evidence; the verdict stays FAIL
    # (the client does not conform) and the reason says it is known
    known_bugs: dict[str, str] = attrs.field(factory=dict)
    # scenario -> what kafka-emu lacks that makes this client fail it (not the client's fault)
    emulator_gaps: dict[str, str] = attrs.field(factory=dict)


class ClientUnavailable(RuntimeError):
    """A built-in client whose library (or Node) is not installed."""


# Found by the kit, each with the evidence (read in the library's source and the run's logs).
_AIOKAFKA_STATIC = (
    "aiokafka 0.14 sends OffsetCommit v2/v3, which has no group.instance.id, and has no error "
    "class for FENCED_INSTANCE_ID (82, read as UnknownError): a replaced static member is told "
    "UNKNOWN_MEMBER_ID on commit, rejoins as a new member with the same instance id and takes it "
    "back, so for a moment both processes own the partition (overlapping-assignment)")
_AIOKAFKA_OFFSET_FETCH = (
    "aiokafka 0.14 sends OffsetFetch v3 but reads only the per-partition error codes; Kafka "
    "answers a coordinator still loading with the top-level COORDINATOR_LOAD_IN_PROGRESS and no "
    "partitions (OffsetFetchRequest.getErrorResponse, v2+), which aiokafka takes for 'nothing "
    "committed': it resets to auto.offset.reset and delivers committed records again "
    "(consumed-behind-commit)")
_KAFKAJS_COORDINATOR = (
    "kafkajs 2.2.4 keeps sending the group's commits and heartbeats to the stopped coordinator "
    "('Broker 1 not found in the cached metadata', ECONNREFUSED; the same error as the open "
    "tulios/kafkajs#802) until its retries run out, then crashes and restarts the consumer as "
    "a new member: a rebalance Kafka's test forbids, and the records whose commits failed are "
    "delivered again")
KNOWN_BUGS: dict[str, dict[str, str]] = {
    "kafkajs": {"broker_failure": _KAFKAJS_COORDINATOR,
                "broker_rolling_bounce": _KAFKAJS_COORDINATOR},
    "aiokafka": {"fencing_static_consumer_stable": _AIOKAFKA_STATIC,
                 "fencing_static_consumer_all": _AIOKAFKA_STATIC,
                 "fault_coordinator_load_in_progress_on_offset_fetch": _AIOKAFKA_OFFSET_FETCH},
}


# What kafka-emu lacks that makes a client fail a scenario, per client: none known now
# (kafka-python 3 failed the leader-moving scenarios until OffsetForLeaderEpoch was served).
EMULATOR_GAPS: dict[str, dict[str, str]] = {}


# Capabilities a built-in client's library does not have (profiles.CAPABILITIES).
_NO_COOPERATIVE = "{} has no cooperative rebalance protocol (no cooperative-sticky assignor)"
_NO_KIP_848 = "{} has no consumer group protocol (no ConsumerGroupHeartbeat, KIP-848)"
UNSUPPORTED: dict[str, dict[str, str]] = {
    # kafka-python 3 has a CooperativeStickyAssignor, but its listener skips
    # on_partitions_assigned when nothing is added (Java's calls it on every rebalance, and
    # Kafka's event handler waits for it): the kit's program does not offer it yet
    "kafka-python": {"cooperative": "the kit's kafka-python client does not offer "
                     "cooperative-sticky yet (kafka-python 3 calls on_partitions_assigned only "
                     "when partitions are added; Java's listener is called on every rebalance)",
                     "consumer_protocol": _NO_KIP_848.format("kafka-python 3")},
    "aiokafka": {"cooperative": _NO_COOPERATIVE.format("aiokafka"),
                 "consumer_protocol": _NO_KIP_848.format("aiokafka")},
    "kafkajs": {"static": "kafkajs has no static membership (group.instance.id)",
                "cooperative": _NO_COOPERATIVE.format("kafkajs"),
                "consumer_protocol": _NO_KIP_848.format("kafkajs")},
}


def _python(module: str, library: str, dist: str) -> Callable[[], ClientSpec]:
    def build() -> ClientSpec:
        if importlib.util.find_spec(library) is None:
            raise ClientUnavailable(f"the {dist} client needs the {dist} package: "
                                    f"pip install {dist}")
        from importlib.metadata import PackageNotFoundError, version
        try:
            v = version(dist)
        except PackageNotFoundError:
            v = None
        base = (sys.executable, "-m", f"kafka_emu.conformance.clients.{module}")
        return ClientSpec(name=dist, consumer=base + ("--consumer",),
                          producer=base + ("--producer",), library_version=v,
                          unsupported=UNSUPPORTED.get(dist, {}),
                          known_bugs=KNOWN_BUGS.get(dist, {}),
                          emulator_gaps=EMULATOR_GAPS.get(dist, {}))
    return build


def _kafkajs() -> ClientSpec:
    from .node import KAFKAJS_VERSION, NodeMissing, kafkajs_command
    try:
        cmd = tuple(kafkajs_command())
    except NodeMissing as exc:
        raise ClientUnavailable(str(exc)) from None
    return ClientSpec(name="kafkajs", consumer=cmd + ("--consumer",), producer=cmd + ("--producer",),
                      unsupported=UNSUPPORTED["kafkajs"],
                      library_version=KAFKAJS_VERSION, known_bugs=KNOWN_BUGS.get("kafkajs", {}))


BUILT_IN: dict[str, Callable[[], ClientSpec]] = {
    "confluent-kafka": _python("confluent_kafka", "confluent_kafka", "confluent-kafka"),
    "kafka-python": _python("kafka_python", "kafka", "kafka-python"),
    "aiokafka": _python("aiokafka", "aiokafka", "aiokafka"),
    "kafkajs": _kafkajs,
}


def built_in(name: str) -> ClientSpec:
    """The spec of a built-in client; ClientUnavailable when its library is missing."""
    if name not in BUILT_IN:
        raise KeyError(f"unknown client {name!r} (built in: {', '.join(BUILT_IN)})")
    return BUILT_IN[name]()


def external(consumer: str, producer: str | None = None, *, profile: Profile | None = None,
             bootstrap_flag: str | None = None, name: str = "external") -> ClientSpec:
    """A spec for any program speaking the contract, from shell-style command strings, taking
    its flags as ``profile`` says (default: the contract as documented); ``bootstrap_flag``
    overrides the profile's."""
    profile = profile or PROFILES["contract"]
    if bootstrap_flag:
        profile = attrs.evolve(profile, bootstrap_flag=bootstrap_flag)
    return ClientSpec(name=name, consumer=tuple(shlex.split(consumer)),
                      producer=tuple(shlex.split(producer)) if producer else None,
                      profile=profile, unsupported=dict(profile.lacks),
                      known_bugs=dict(profile.known_bugs))
