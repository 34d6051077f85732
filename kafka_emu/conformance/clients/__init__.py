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

from .. import known_bugs as known
from ..known_bugs import KnownBug
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
    # the client's bugs that make it fail scenarios, with their evidence (known_bugs.py): the
    # verdict stays FAIL (the client does not conform) and the reason says the bug is known
    known_bugs: tuple[KnownBug, ...] = ()
    # scenario -> what kafka-emu lacks that makes this client fail it (not the client's fault)
    emulator_gaps: dict[str, str] = attrs.field(factory=dict)


class ClientUnavailable(RuntimeError):
    """A built-in client whose library (or Node) is not installed."""


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
                          known_bugs=known.of(dist),
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
                      library_version=KAFKAJS_VERSION, known_bugs=known.of("kafkajs"))


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
                      # the profile's bugs, and those of the kit's share consumer program that
                      # the share scenarios run for a client of this name
                      known_bugs=known.from_profile(profile.known_bugs)
                      + known.of_share_program(name))
