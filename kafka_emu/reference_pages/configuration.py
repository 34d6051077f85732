"""docs/reference/configuration.md: every configuration key, its default and Kafka's.

The keys are the declarations' own (``BrokerConfig.known_names()``, which gathers the broker's,
the coordinator's, the share groups' and the security settings; and the group configs of
``GROUP_CONFIGS``); each default is read from a default-built config object, so a changed
default changes the page. Kafka's default is shown where it differs, from the ``KAFKA_DEFAULTS``
declared beside each config class. What a key changes is ``config_notes.py``.
"""

from __future__ import annotations

from typing import Any

from ..broker import config as broker_config
from ..broker.config import BrokerConfig
from ..broker.resource_configs import GROUP_CONFIGS
from ..coordinator import config as coordinator_config
from ..coordinator.share import config as share_config
from ..security import config as security_config
from .common import code, header, table
from .config_notes import GROUP, SECTIONS, Note

KAFKA_DEFAULTS: dict[str, str] = {
    **broker_config.KAFKA_DEFAULTS, **coordinator_config.KAFKA_DEFAULTS,
    **share_config.KAFKA_DEFAULTS, **security_config.KAFKA_DEFAULTS,
}


def _attribute_of(name: str) -> tuple[Any, str] | None:
    """(default-built object, attribute) holding ``name``'s value, or None (a pattern name)."""
    broker = BrokerConfig(cluster_id="-")
    coordinator = broker.coordinator
    if name in BrokerConfig.KAFKA_NAMES:
        return broker, BrokerConfig.KAFKA_NAMES[name][0]
    if name in coordinator_config._KAFKA_FIELDS:
        return coordinator, coordinator_config._KAFKA_FIELDS[name][0]
    if name in coordinator_config._KAFKA_LISTS:
        return coordinator, coordinator_config._KAFKA_LISTS[name][0]
    if name == "group.consumer.migration.policy":
        return coordinator, "group_consumer_migration_policy"
    if name in share_config._FIELDS:
        return coordinator.share, share_config._FIELDS[name][0]
    if name == "group.share.assignors":
        return coordinator.share, "assignor"
    if name == "group.share.enable":
        return coordinator.share, "force_enable"
    if name in security_config.SecurityConfig.KAFKA_NAMES:
        return broker.security, security_config.SecurityConfig.KAFKA_NAMES[name][0]
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    if value is None or value == {} or value == "":
        return ""
    return str(value)


def default_of(name: str, note: Note) -> str:
    """The page's default cell text for ``name`` (unformatted)."""
    if note.default is not None:
        return note.default
    found = _attribute_of(name)
    value = "" if found is None else _text(getattr(*found))
    return f"`{value}`" if value else "none"


def kafka_of(name: str, note: Note) -> str:
    if name in KAFKA_DEFAULTS:
        value = KAFKA_DEFAULTS[name]
        return f"`{value}`" if " " not in value else value
    if note.kafka is not None:
        return note.kafka
    if name.startswith("emu."):
        return "(kafka-emu's own)"
    return "same"


def _row(name: str, note: Note) -> list[str]:
    default = default_of(name, note)
    if name in KAFKA_DEFAULTS:
        default = f"**{default}**"
    return [code(name), default, kafka_of(name, note), note.meaning]


def _group_rows() -> list[list[str]]:
    rows = []
    for name, (type_, synonym, fallback) in GROUP_CONFIGS.items():
        if synonym and "." in synonym and synonym.startswith("group."):
            default = f"the broker's {code(synonym)}"
        elif synonym:  # an attribute path of CoordinatorConfig, e.g. share.session_timeout_ms
            owner, _, attr = synonym.partition(".")
            kafka_name = next(n for n, (a, *_) in share_config._FIELDS.items() if a == attr)
            default = f"the broker's {code(kafka_name)}"
        else:
            default = code(fallback)
        rows.append([code(name), type_.name.lower(), default, GROUP[name].meaning])
    return rows


def render() -> str:
    parts = [header(
        "configuration", "Configuration",
        "Every setting `kafka-emu serve -c KEY=VALUE` and the fixtures' settings dict accept "
        "(`make_config({...})`, `@pytest.mark.kafka_emu(settings={...})`), under Kafka's broker "
        "config names. **Bold** defaults are kafka-emu's own choice where Kafka's differs; "
        "\"same\" means Kafka's default. An unknown name or a bad value stops the start with "
        "a one-line error (exit code 2 from the CLI, ValueError from `make_config`).")]
    for title, what, notes in SECTIONS:
        parts += [f"## {title}", "", f"{what[0].upper()}{what[1:]}.", "",
                  table(["name", "default", "Kafka's default", "what it changes"],
                        (_row(name, note) for name, note in notes.items())), ""]
    parts += ["## Group configs", "",
              "Set per group with an admin client's IncrementalAlterConfigs on a `GROUP` "
              "resource (`kafka-configs.sh --entity-type groups`), read back with "
              "DescribeConfigs; a group that does not set one has the broker's value. "
              "Bounds are the broker's `group.*.min/max.*` settings, as Kafka checks them.", "",
              table(["name", "type", "default", "what it changes"], _group_rows()), ""]
    return "\n".join(parts)


def documented_names() -> set[str]:
    """Every key the page has a row for (the test compares these with the declarations)."""
    return {name for _, _, notes in SECTIONS for name in notes} | set(GROUP)
