"""Client profiles: how a verifiable-client program takes what the kit gives it.

Kafka's contract (the docstring of ``tests/kafkatest/services/verifiable_client.py``) is the
baseline every profile starts from: the flags ``--topic --group-id --bootstrap-server
--session-timeout --enable-autocommit --max-messages --assignment-strategy`` and a properties
file (``--consumer.config`` / ``--producer.config``) for everything else. The kit needs more
than the flags (``group.instance.id``, ``acks``, ``client.id``, heartbeat and poll intervals):
it writes those as properties, which the contract's file already carries, so a client that
reads its file needs nothing kafka-emu-specific. A profile only says where a program departs
from that:

- ``bootstrap_flag``: librdkafka's ``kafkatest_verifiable_client`` takes ``--broker-list``;
- ``flags``: properties the program takes as a flag of its own instead (Kafka's Java
  VerifiableConsumer has ``--group-instance-id``);
- ``properties = "flag"``: no properties file, each property as ``property_flag key=value``
  (``-X`` for librdkafka's, which reads the file too);
- ``lacks``: capabilities it does not have, each with why; a scenario needing one is SKIPPED
  with that reason, never failed (``CAPABILITIES`` names them);
- ``detect``: text in the program's ``--help`` output (stdout and stderr) that identifies it;
- ``known_bugs``: scenario -> a bug of the program that makes it fail that scenario, with its
  evidence; the verdict stays FAIL (the program does not conform) and its reason says the bug
  is known, as for the kit's own clients (``known_bugs.py`` labels both).

A user writes their own profile as a TOML or JSON file with these keys (and ``extends``, the
profile it starts from, ``contract`` by default) and passes its path to ``--profile``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import attrs

from .known_bugs import LIBRDKAFKA_VERIFIABLE_CLIENT

# What a scenario may need from a client (Scenario.needs), as a skip reason names it.
CAPABILITIES = {
    "static": "static membership (group.instance.id)",
    "cooperative": "cooperative rebalancing (an incremental rebalance listener)",
    "consumer_protocol": "the consumer group protocol (KIP-848, group.protocol=consumer)",
}

# The group protocol settings as Kafka's VerifiableConsumer takes them: flags of its own (its
# --group-protocol default would override a properties file's group.protocol).
_PROTOCOL_FLAGS = {"group.protocol": "--group-protocol",
                   "group.remote.assignor": "--group-remote-assignor"}

CONFIG_FLAGS = {"consumer": "--consumer.config", "producer": "--producer.config"}
DETECT_TIMEOUT_S = 20.0


class ProfileError(ValueError):
    """A profile that cannot be used: unknown name, unreadable file, bad keys or values."""


@attrs.frozen(kw_only=True)
class Profile:
    name: str
    summary: str = ""
    bootstrap_flag: str = "--bootstrap-server"
    properties: str = "file"  # "file" (the contract's --*.config FILE) or "flag"
    property_flag: str = "-X"
    flags: dict[str, str] = attrs.field(factory=dict)  # property -> the flag carrying it
    lacks: dict[str, str] = attrs.field(factory=dict)  # capability -> why
    detect: tuple[str, ...] = ()
    known_bugs: dict[str, str] = attrs.field(factory=dict)  # scenario -> the bug, with evidence

    def arguments(self, role: str, properties: dict[str, Any], path: Path) -> list[str]:
        """The argv that hands ``properties`` to a ``role`` ("consumer" / "producer") program:
        each property a profile flag carries as that flag, the rest in the properties file at
        ``path`` (written here, empty if nothing is left: the contract passes one anyway) or,
        with ``properties = "flag"``, as ``property_flag key=value``."""
        argv: list[str] = []
        rest = {}
        for key, value in properties.items():
            if key in self.flags:
                argv += [self.flags[key], str(value)]
            else:
                rest[key] = value
        if self.properties == "flag":
            for key, value in rest.items():
                argv += [self.property_flag, f"{key}={value}"]
            return argv
        path.write_text("".join(f"{k}={v}\n" for k, v in rest.items()), encoding="utf-8")
        return argv + [CONFIG_FLAGS[role], str(path)]


CONTRACT = Profile(
    name="contract", summary="Kafka's verifiable-client contract as documented (flags and a "
    "properties file; the kit's settings as properties)")
BUILT_IN: dict[str, Profile] = {p.name: p for p in (
    CONTRACT,
    Profile(name="java", summary="Kafka's own VerifiableConsumer / VerifiableProducer "
            "(org.apache.kafka.tools)", flags={"group.instance.id": "--group-instance-id",
                                                **_PROTOCOL_FLAGS},
            detect=("verifiable-consumer", "verifiable-producer")),
    Profile(name="librdkafka", summary="librdkafka's examples/kafkatest_verifiable_client "
            "(one program, --consumer / --producer)", bootstrap_flag="--broker-list",
            lacks={"cooperative": "librdkafka's kafkatest_verifiable_client has an eager-only "
                   "rebalance callback (it calls unassign() on every revocation)",
                   "consumer_protocol": "librdkafka's kafkatest_verifiable_client assigns with "
                   "assign()/unassign(), which librdkafka refuses when the assignment is "
                   "incremental, as the consumer protocol's always is (and librdkafka before "
                   "2.4 has no group.protocol at all)"},
            detect=("librdkafka version",), known_bugs=LIBRDKAFKA_VERIFIABLE_CLIENT),
    Profile(name="kafka-emu", summary="kafka-emu's own verifiable clients "
            "(kafka_emu.conformance.clients)", flags=dict(_PROTOCOL_FLAGS),
            detect=("verifiable consumer", "verifiable producer")),
)}

_KEYS = {"name", "summary", "extends", "bootstrap_flag", "properties", "property_flag", "flags",
         "lacks", "detect", "known_bugs"}


def load(spec: str) -> Profile:
    """A built-in profile by name, or a user's profile from a ``.toml`` / ``.json`` file."""
    if spec in BUILT_IN:
        return BUILT_IN[spec]
    path = Path(spec)
    if path.suffix.lower() not in (".toml", ".json"):
        raise ProfileError(f"unknown profile {spec!r}: give one of {', '.join(BUILT_IN)} or a "
                           ".toml / .json file")
    try:
        text = path.read_text(encoding="utf-8")
        data = _toml(text, spec) if path.suffix.lower() == ".toml" else json.loads(text)
    except (OSError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ProfileError(f"profile {spec}: {exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"profile {spec}: expected a table of settings")
    return from_dict(data, default_name=path.stem, where=spec)


def _toml(text: str, where: str) -> Any:
    # tomllib is in the standard library from Python 3.11; kafka-emu also runs on 3.10, where a
    # profile can be written as JSON instead.
    try:
        import tomllib
    except ImportError:
        raise ProfileError(f"profile {where}: a .toml profile needs Python 3.11 or newer; "
                           "write it as .json") from None
    return tomllib.loads(text)


def from_dict(data: dict[str, Any], *, default_name: str, where: str) -> Profile:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ProfileError(f"profile {where}: unknown key(s) {', '.join(unknown)} (known: "
                           f"{', '.join(sorted(_KEYS))})")
    base_name = data.get("extends", "contract")
    if base_name not in BUILT_IN:
        raise ProfileError(f"profile {where}: extends {base_name!r}, not one of "
                           f"{', '.join(BUILT_IN)}")
    base = BUILT_IN[base_name]
    fields: dict[str, Any] = {"name": data.get("name", default_name)}
    for key in ("name", "summary", "bootstrap_flag", "property_flag"):
        if key in data:
            fields[key] = _text(data[key], key, where)
    for key in ("bootstrap_flag", "property_flag"):
        if key in fields and not fields[key].startswith("-"):
            raise ProfileError(f"profile {where}: {key} must be a flag (start with '-'), got "
                               f"{fields[key]!r}")
    if "properties" in data:
        if data["properties"] not in ("file", "flag"):
            raise ProfileError(f"profile {where}: properties must be \"file\" or \"flag\", got "
                               f"{data['properties']!r}")
        fields["properties"] = data["properties"]
    for key in ("flags", "lacks", "known_bugs"):
        if key in data:
            table = data[key]
            if not isinstance(table, dict):
                raise ProfileError(f"profile {where}: {key} must be a table")
            fields[key] = {**getattr(base, key),
                           **{k: _text(v, f"{key}.{k}", where) for k, v in table.items()}}
    unknown_caps = sorted(set(fields.get("lacks", {})) - set(CAPABILITIES))
    if unknown_caps:
        raise ProfileError(f"profile {where}: lacks names unknown capabilities "
                           f"{', '.join(unknown_caps)} (known: {', '.join(CAPABILITIES)})")
    if "detect" in data:
        detect = data["detect"]
        if not isinstance(detect, list) or not all(isinstance(d, str) and d for d in detect):
            raise ProfileError(f"profile {where}: detect must be a list of strings")
        fields["detect"] = tuple(detect)
    return attrs.evolve(base, **fields)


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ProfileError(f"profile {where}: {key} must be a non-empty string, got {value!r}")
    return value


def detect(command: tuple[str, ...] | list[str]) -> tuple[Profile, str]:
    """The profile of a program, from what ``COMMAND --help`` prints (stdout and stderr: a
    program that does not know ``--help`` still tells who it is, librdkafka's prints its
    version first), and why. Falls back to ``contract`` (with ``--broker-list`` if that is
    the only bootstrap flag its help names)."""
    try:
        proc = subprocess.Popen([*command, "--help"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                errors="replace", start_new_session=True)
    except OSError as exc:
        return CONTRACT, f"`--help` could not run ({exc}): the contract"
    try:
        text, _ = proc.communicate(timeout=DETECT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        text, _ = proc.communicate()
    for profile in BUILT_IN.values():
        for mark in profile.detect:
            if mark in text:
                return profile, f"its --help output says {mark!r}"
    if "--broker-list" in text and "--bootstrap-server" not in text:
        return (attrs.evolve(CONTRACT, bootstrap_flag="--broker-list"),
                "not recognised; its --help names --broker-list only: the contract with it")
    return CONTRACT, "not recognised from its --help output: the contract"
