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


@attrs.frozen(kw_only=True)
class ClientSpec:
    """How to run a verifiable client: the consumer and producer commands (argv lists; the kit
    appends the contract's flags), the flag it takes for the bootstrap address, and what it
    cannot do (scenarios needing it are skipped with ``unsupported[feature]`` as the reason)."""

    name: str
    consumer: tuple[str, ...]
    producer: tuple[str, ...] | None = None
    bootstrap_flag: str = "--bootstrap-server"
    unsupported: dict[str, str] = attrs.field(factory=dict)
    library_version: str | None = None


class ClientUnavailable(RuntimeError):
    """A built-in client whose library (or Node) is not installed."""


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
                          producer=base + ("--producer",), library_version=v)
    return build


def _kafkajs() -> ClientSpec:
    from .node import KAFKAJS_VERSION, NodeMissing, kafkajs_command
    try:
        cmd = tuple(kafkajs_command())
    except NodeMissing as exc:
        raise ClientUnavailable(str(exc)) from None
    return ClientSpec(name="kafkajs", consumer=cmd + ("--consumer",), producer=cmd + ("--producer",),
                      unsupported={"static": "kafkajs has no static membership (group.instance.id)"},
                      library_version=KAFKAJS_VERSION)


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


def external(consumer: str, producer: str | None = None, *, bootstrap_flag: str = "--bootstrap-server",
             name: str = "external") -> ClientSpec:
    """A spec for any program speaking the contract, from shell-style command strings."""
    return ClientSpec(name=name, consumer=tuple(shlex.split(consumer)),
                      producer=tuple(shlex.split(producer)) if producer else None,
                      bootstrap_flag=bootstrap_flag)
