"""The generated indexes (declared APIs, handlers) match the code, and the tables they back are
lazy: a server answers ApiVersions -- every API's range -- without importing the declarations or
handlers of the other APIs (or the group coordinator), and loading the rest later gives the same
objects the modules hold."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_emu.broker import handlers
from kafka_emu.protocol import messages, registry
from kafka_emu.protocol.lazy_table import LazyTable


@pytest.mark.parametrize("package, text", [(messages, registry.index_text),
                                           (handlers, handlers.index_text)],
                         ids=["messages", "handlers"])
def test_the_generated_index_is_current(package, text):
    committed = Path(package.__file__).with_name("_index.py").read_text()
    assert committed == text(), f"stale index: run `{registry.REGENERATE}`"


def test_the_tables_hold_each_modules_own_objects():
    for key, (api, module) in registry.scan().items():
        assert registry.APIS[key] is api
        assert registry.BY_NAME[api.name] is api
        assert registry.name_of(key) == api.name and registry.valid_versions(key) == api.valid
        assert importlib.import_module(f"{messages.__name__}.{module}").API is api
    for key, (handler, _) in handlers.scan().items():
        assert handlers.HANDLERS[key] is handler
        assert handler.api is registry.APIS[key]
    assert list(registry.APIS) == sorted(registry.scan())
    assert list(handlers.HANDLERS) == sorted(handlers.scan())


def test_a_lazy_table_loads_a_value_once_and_knows_its_keys_without_loading():
    calls = []
    table = LazyTable([3, 1], lambda key: calls.append(key) or key * 10)
    assert 3 in table and 2 not in table and len(table) == 2 and list(table) == [3, 1]
    assert calls == []
    assert table[1] == 10 and table.get(1) == 10 and table.get(2, "no") == "no"
    assert calls == [1] and table.loaded == [1]
    with pytest.raises(KeyError):
        table[2]
    assert dict(table) == {3: 30, 1: 10} and table.items() == [(3, 30), (1, 10)]
    assert calls == [1, 3]


def test_a_stale_entry_is_refused_when_loaded(monkeypatch):
    entry = registry.INDEX[12]
    monkeypatch.setitem(registry.INDEX, 12, (entry[0], entry[1], "0-99", entry[3]))
    with pytest.raises(RuntimeError, match="stale.*kafka_emu.indexes"):
        registry._load(12)


LAZY = r"""
import sys
from functools import partial
import trio
from kafka_emu.broker.config import BrokerConfig
from kafka_emu.broker.server import serve
from kafka_emu.protocol import decode
from kafka_emu.protocol.headers import encode_request
from kafka_emu.protocol.registry import APIS
from kafka_emu.protocol.schema import Api
from kafka_emu.protocol.versions import Versions

async def main():
    # as `kafka-emu serve` runs it, less the loading ahead of use at its first idle moment
    # (broker/warm.py, which would race this client): what the tables load by themselves
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, BrokerConfig.from_kafka({}, port=0),
                                            warm=False))
        stream = await trio.open_tcp_stream(b"127.0.0.1", bound.port)  # bytes: no idna codec
        await stream.send_all(encode_request(APIS[18], 3, 7, "lazy", APIS[18].request(
            client_software_name="t", client_software_version="1")))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            data += await stream.receive_some(65536)
        answer = decode(APIS[18].response, 3, data[8:])
        print(sorted(a.api_key for a in answer.api_keys))
        print(sorted(m.rsplit(".", 1)[1] for m in sys.modules
                     if m.startswith(("kafka_emu.protocol.messages.", "kafka_emu.broker.handlers."))))
        print("kafka_emu.coordinator.coordinator" in sys.modules)
        print(sorted(m for m in ("kafka_emu.log", "kafka_emu.broker.events", "json",
                                 "kafka_emu.broker.resource_configs", "encodings.idna")
                     if m in sys.modules))
        # nor made a __repr__, __eq__ or __hash__ (kafka_emu/frozen.py's lazy_dunders)
        print(sorted(c.__name__ for c in (BrokerConfig, Api, Versions, APIS[18].request,
                                          APIS[18].response)
                     if not c.__eq__.__code__.co_filename.endswith("frozen.py")))
        nursery.cancel_scope.cancel()

trio.run(main)
"""


def test_a_server_answers_api_versions_without_loading_other_apis():
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    assert eval(out[0]) == sorted(handlers.HANDLERS)  # every API listed (68/69 on by default)
    assert eval(out[1]) == ["_index", "_index", "api_versions", "api_versions"]
    assert out[2] == "False"  # nor the group coordinator (made at the first group request)
    # nor the log package (made with the first topic), the event classes (the first observed
    # event), the configs view, json, or Python's idna codec (an ASCII host goes as bytes)
    assert out[3] == "[]"
    assert out[4] == "[]"  # nor compiled the methods of the classes it made (stubs until used)
