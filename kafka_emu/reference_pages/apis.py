"""docs/reference/apis.md: every Kafka API kafka-emu serves and its versions, from the indexes.

The two generated indexes (``python -m kafka_emu.indexes``) are the source: the declarations'
``protocol/messages/_index.py`` (name, valid and flexible versions) and the handlers'
``broker/handlers/_index.py`` (the versions each handler serves). What a default broker
advertises comes from ``advertised_versions()``, the function ApiVersions answers with; each
API's version notes are its handler module's first paragraph (the house style opens every
handler with them).
"""

from __future__ import annotations

import importlib

from ..broker import handlers
from ..broker.handlers._index import INDEX as SERVED
from ..protocol.messages._index import INDEX as DECLARED
from .common import anchor, code, header, prose, table


def _notes(module: str) -> str:
    doc = importlib.import_module(f"{handlers.__name__}.{module}").__doc__ or ""
    return prose(doc.strip().split("\n\n")[0])


def render() -> str:
    advertised = handlers.advertised_versions()
    rows = []
    for key, (name, _module, valid, flexible) in DECLARED.items():
        served = SERVED.get(key)
        shown = advertised.get(key)
        rows.append([str(key), f"[{name}](#{anchor(name)})",
                     code(served[1]) if served else "not served",
                     code(shown) if shown is not None else "no",
                     code(valid), code(flexible)])
    parts = [header(
        "apis", "APIs and versions",
        "Every Kafka API kafka-emu declares and the versions its handler serves, from the "
        "generated indexes (`python -m kafka_emu.indexes`). *Served* is what ApiVersions "
        "advertises for the API when nothing caps it; *advertised by default* is what a broker "
        "started with no settings answers (the share-group APIs follow the `share.version` "
        "feature, `emu.share.version`; the KIP-848 APIs `group.coordinator.rebalance.protocols`; "
        "`emu.api.max.versions` caps any of them to emulate an older broker). *Declared* is the "
        "range the message declaration decodes, which may reach below what Kafka 4.x still "
        "serves (versions KIP-896 removed are declared, refused with UNSUPPORTED_VERSION). "
        "`kafka-emu versions --bootstrap-server HOST:PORT` shows a running broker's ranges "
        "beside kafka-emu's own."),
        table(["key", "API", "served", "advertised by default", "declared", "flexible from"],
              rows), "",
        "## Version notes", "",
        "What changes from version to version, and where kafka-emu answers as Kafka does in a "
        "way a reader might not expect: each handler's own notes.", ""]
    for key, (name, _module, _valid, _flexible) in DECLARED.items():
        served = SERVED.get(key)
        parts += [f"### {name}", "", f"API key {key}."
                  + (f" {_notes(served[0])}" if served else " Declared, not served."), ""]
    return "\n".join(parts).rstrip("\n") + "\n"


def served_names() -> set[str]:
    """Every API a handler serves (the test checks each has a row and a section)."""
    return {DECLARED[key][0] for key in SERVED}
