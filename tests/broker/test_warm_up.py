"""Issue 40: the first group on a fresh emulator no longer pays for loading the group path.

A server left idle after it starts loads what a first group needs (broker/warm.py); the first
JoinGroup, SyncGroup, Heartbeat, OffsetCommit and OffsetFetch after that import no module and
compile no codec function, ``__init__`` or RequestHandled row maker -- before, the first JoinGroup
imported the whole coordinator (tens of ms, every connection waiting). The group path is loaded
in one go at the server's first idle moment (1 ms), ahead of the rest, so a client that joins at
once finds it too. Under trio's MockClock with autojump nothing is loaded ahead: the clock jumps
before the server counts as idle. Each check runs in a fresh interpreter, as a ``kafka-emu
serve`` does: in this one, other tests have loaded everything long ago.
"""

from __future__ import annotations

import json
import subprocess
import sys

FIRST_GROUP = r"""
import json, sys
from functools import partial
import trio
from kafka_emu.broker import warm
from kafka_emu.broker.event_rows import REQUEST_ROWS
from kafka_emu.broker.server import serve
from kafka_emu.protocol import codec
from kafka_emu.protocol.generated_source import LINE_FIELDS
from kafka_emu.protocol.headers import RequestHeader, ResponseHeader
from kafka_emu.protocol.registry import BY_NAME
from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol
from kafka_emu.protocol.messages.offset_commit import (OffsetCommitRequestPartition,
                                                       OffsetCommitRequestTopic)
from kafka_emu.protocol.messages.offset_fetch import (OffsetFetchRequestGroup,
                                                      OffsetFetchRequestTopics)
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

JOIN, SYNC, BEAT = BY_NAME["JoinGroup"], BY_NAME["SyncGroup"], BY_NAME["Heartbeat"]
COMMIT, FETCH = BY_NAME["OffsetCommit"], BY_NAME["OffsetFetch"]
VERSIONS = {JOIN: 9, SYNC: 5, BEAT: 4, COMMIT: 9, FETCH: 8}


def stubs():
    # classes whose __init__ is still frozen.fast_init's stub (compiled at the first instance)
    return {f"{name}.{cls.__name__}" for name, module in list(sys.modules.items())
            if name.startswith("kafka_emu.") for cls in list(vars(module).values())
            if isinstance(cls, type) and cls.__module__ == name
            and getattr(cls.__dict__.get("__init__"), "__wrapped__", None) is not None}


def row_makers():
    # the functions that make a request's RequestHandled row (the timeline observes every
    # request), per pair of request and response classes
    return {(q.__name__, r.__name__) for q, by in REQUEST_ROWS.items() for r in by}


def loaded():
    return set(sys.modules), set(LINE_FIELDS), stubs(), row_makers()


async def main(wait):
    if wait == "group-path":  # the rest held off: what the first idle moment loads, alone
        warm.later_steps = lambda: iter(())
    config = make_config({"group.initial.rebalance.delay.ms": "0"}, topics={"t": 1})
    # the client's own side of the codec (request writers, response readers), made first
    for api, version in VERSIONS.items():
        codec.top_plan(api.request, version).write
        codec.top_plan(api.response, version).read_at
    RequestHeader(request_api_key=0, request_api_version=0, correlation_id=0, client_id="")
    for version in (1, 2):
        codec.top_plan(RequestHeader, version).write
    for version in (0, 1):
        codec.top_plan(ResponseHeader, version).read_at
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, config, warm=wait != "cold"))
        # observed, as the Python runners' timeline observes: rows for every request
        bound.broker.observation.subscribe(lambda event: None, rows=True)
        if wait != "cold":  # the server idle until it has loaded what it loads ahead of use
            with trio.fail_after(60):
                while not warm.warmed(bound.broker):
                    await trio.sleep(0.1)  # (a sleeping task lets the server be idle)
        client = await WireClient.connect(bound.host, bound.port)
        before = loaded()
        join = dict(group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=30000,
                    protocol_type="consumer",
                    protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])
        first = await client.request(JOIN, 9, JOIN.request(member_id="", **join))
        joined = await client.request(JOIN, 9, JOIN.request(member_id=first.member_id, **join))
        member, generation = joined.member_id, joined.generation_id
        synced = await client.request(SYNC, 5, SYNC.request(
            group_id="g", generation_id=generation, member_id=member, protocol_type="consumer",
            protocol_name="range", assignments=[]))
        beat = await client.request(BEAT, 4, BEAT.request(
            group_id="g", generation_id=generation, member_id=member))
        committed = await client.request(COMMIT, 9, COMMIT.request(
            group_id="g", generation_id_or_member_epoch=generation, member_id=member,
            topics=[OffsetCommitRequestTopic(name="t", partitions=[OffsetCommitRequestPartition(
                partition_index=0, committed_offset=0, committed_metadata="")])]))
        fetched = await client.request(FETCH, 8, FETCH.request(groups=[OffsetFetchRequestGroup(
            group_id="g", topics=[OffsetFetchRequestTopics(name="t", partition_indexes=[0])])]))
        after = loaded()
        print(json.dumps({
            "errors": [first.error_code, joined.error_code, synced.error_code, beat.error_code,
                       committed.topics[0].partitions[0].error_code,
                       fetched.groups[0].topics[0].partitions[0].error_code],
            "imported": sorted(after[0] - before[0]),
            "codec functions compiled": sorted(name.rsplit(" #", 1)[0]
                                               for name in after[1] - before[1]),
            "inits compiled": sorted(before[2] - after[2]),
            "row makers compiled": sorted(map(list, after[3] - before[3])),
        }))
        nursery.cancel_scope.cancel()

trio.run(main, sys.argv[1])
"""


def _in_a_fresh_interpreter(script: str, wait: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, wait], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def first_group(wait: str) -> dict:
    return _in_a_fresh_interpreter(FIRST_GROUP, wait)


def test_the_first_group_on_an_idle_server_loads_nothing():
    found = first_group("wait")
    assert found["errors"] == [79, 0, 0, 0, 0, 0]  # MEMBER_ID_REQUIRED (v4+), then all fine
    assert found["imported"] == []
    assert found["codec functions compiled"] == []
    assert found["inits compiled"] == []
    assert found["row makers compiled"] == []


def test_the_group_path_loaded_at_the_first_idle_moment_is_all_a_first_group_needs():
    # what a client that joins at once finds: the server's first idle moment (1 ms after the
    # listener opens) loads the group path in one go; the rest (the data path, older versions)
    # is held off here, and the first group still loads nothing of its own
    # -- but for OffsetCommit, sent once the group is formed, which the later steps load first
    found = first_group("group-path")
    assert found["errors"] == [79, 0, 0, 0, 0, 0]
    assert found["imported"] == ["kafka_emu.broker.handlers.offset_commit"]  # (the client
    # imported its declarations)
    assert found["codec functions compiled"] and all(
        name.startswith("<kafka_emu.codec OffsetCommit")
        for name in found["codec functions compiled"])
    assert all(".offset_commit." in name for name in found["inits compiled"])
    assert found["row makers compiled"] == [["OffsetCommitRequest", "OffsetCommitResponse"]]


AUTOJUMP = r"""
import sys
from functools import partial
import trio
from trio.testing import MockClock
from kafka_emu.broker import warm
from kafka_emu.broker.config import BrokerConfig
from kafka_emu.broker.server import serve

async def main():
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, BrokerConfig.from_kafka({}, port=0)))
        await trio.sleep(3600)  # an hour of virtual time, the server idle all along
        print(warm._warmed, "coordinator" in bound.broker.__dict__,
              "kafka_emu.coordinator.coordinator" in sys.modules)
        nursery.cancel_scope.cancel()

trio.run(main, clock=MockClock(autojump_threshold=0))
"""


def test_nothing_is_loaded_ahead_under_a_mock_clock_with_autojump():
    # a test on trio's virtual clock is not slowed, nor its order of events changed, by
    # loading: the clock jumps before the server counts as idle, so everything loads on use
    out = subprocess.run([sys.executable, "-c", AUTOJUMP], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "False"]


def test_a_server_that_does_not_warm_up_loads_on_first_use():
    # what the check above measures: the same requests on a server that leaves everything to
    # its first use (serve(warm=False), as every server did before) load the handlers and
    # compile what they use
    found = first_group("cold")
    assert found["errors"] == [79, 0, 0, 0, 0, 0]
    assert "kafka_emu.broker.handlers.join_group" in found["imported"]
    assert found["codec functions compiled"] and found["inits compiled"]
    assert ["JoinGroupRequest", "JoinGroupResponse"] in found["row makers compiled"]


OUT_OF_DESCRIPTORS = r"""
import errno, importlib, logging, sys
from functools import partial
import trio
from kafka_emu.broker import warm
from kafka_emu.broker.server import serve
from kafka_emu.protocol.registry import BY_NAME
from kafka_emu.protocol.messages.join_group import JoinGroupRequestProtocol
from kafka_emu.testing import make_config
from kafka_emu.testing.wire import WireClient

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
real_import = importlib.import_module

def no_descriptor_left(name, *args):  # what an import meets when clients hold every descriptor
    raise OSError(errno.EMFILE, "Too many open files")

async def main():
    config = make_config({"group.initial.rebalance.delay.ms": "0"})
    async with trio.open_nursery() as nursery:
        warm.importlib.import_module = no_descriptor_left
        bound = await nursery.start(partial(serve, config))
        await trio.sleep(0.5)  # idle: warm-up starts, and stops at its first import
        warm.importlib.import_module = real_import
        JOIN = BY_NAME["JoinGroup"]
        client = await WireClient.connect(bound.host, bound.port)
        first = await client.request(JOIN, 9, JOIN.request(
            group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id="",
            protocol_type="consumer", protocols=[JoinGroupRequestProtocol(name="r", metadata=b"")]))
        print(first.error_code, len(bound.broker.unexpected), warm.warmed(bound.broker))
        nursery.cancel_scope.cancel()

trio.run(main)
"""


def test_a_warm_up_out_of_file_descriptors_stops_quietly_and_the_group_path_loads_on_use():
    # a client holding every descriptor (tests/broker/test_hardening.py's fd limit) makes an
    # import fail: a warning, not a bug recorded nor a traceback, and the first group still forms
    out = subprocess.run([sys.executable, "-c", OUT_OF_DESCRIPTORS], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["79", "0", "False"]  # MEMBER_ID_REQUIRED: served
    assert "loading ahead of use stopped ([Errno 24] Too many open files)" in out.stderr
    assert "Traceback" not in out.stderr


FIRST_RECORDS = r"""
import json, sys
from functools import partial
import trio
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from kafka_emu.broker import warm
from kafka_emu.broker.server import serve
from kafka_emu.protocol.generated_source import LINE_FIELDS
from kafka_emu.testing import make_config


def ours():
    return {name for name in sys.modules if name.split(".")[0] in ("kafka_emu", "crc32c")}


def produce_then_consume(bootstrap):
    # librdkafka 2.16's idempotent producer's InitProducerId (v4) and first Produce (v10), then
    # a consumer's ListOffsets (v7) and Fetch (v16)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 3,
                         "enable.idempotence": True})
    producer.produce("t", b"first")
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "log_level": 3,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("t", 0, OFFSET_BEGINNING)])
    try:
        for _ in range(300):
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is None:
                return msg.value().decode()
        return None
    finally:
        consumer.close()


async def main(wait):
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(serve, make_config(topics={"t": 1}),
                                            warm=wait != "cold"))
        if wait != "cold":
            with trio.fail_after(60):
                while not warm.warmed(bound.broker):
                    await trio.sleep(0.1)
        before = ours(), set(LINE_FIELDS)
        value = await trio.to_thread.run_sync(produce_then_consume,
                                              f"{bound.host}:{bound.port}")
        print(json.dumps({
            "value": value,
            "imported": sorted(ours() - before[0]),
            "codec functions compiled": sorted({name.rsplit(" #", 1)[0].split()[1]
                                                for name in set(LINE_FIELDS) - before[1]}),
        }))
        nursery.cancel_scope.cancel()

trio.run(main, sys.argv[1])
"""


def first_records(wait: str) -> dict:
    return _in_a_fresh_interpreter(FIRST_RECORDS, wait)


def test_the_first_produce_and_fetch_on_an_idle_server_load_nothing():
    # the data path's codec for the versions the clients of the day send (an idempotent
    # producer's InitProducerId among them), and the crc32c binding, are loaded ahead of use
    # too: a fresh emulator's first Produce paid about 2.5 ms for them, its first consumer's
    # ListOffsets and Fetch about 4 ms, every connection waiting
    found = first_records("wait")
    assert found["value"] == "first"
    assert found["imported"] == []
    assert found["codec functions compiled"] == []


def test_a_server_that_does_not_warm_up_loads_the_data_path_on_first_use():
    # what the check above measures: the same requests on a server that leaves it all to first
    # use import the crc32c binding at the first batch and compile the four APIs' functions
    found = first_records("cold")
    assert found["value"] == "first"
    assert "crc32c" in found["imported"]
    assert {"InitProducerIdRequest", "ProduceRequest", "ListOffsetsRequest", "FetchRequest",
            "FetchResponse"} <= set(found["codec functions compiled"])


def test_every_data_version_loaded_ahead_is_one_the_server_serves():
    # a version named in DATA_VERSIONS that a handler stopped serving would be skipped in
    # silence; keep the table true to the handlers
    from kafka_emu.broker.handlers import HANDLERS
    from kafka_emu.broker.warm import DATA_VERSIONS

    for key, versions in DATA_VERSIONS.items():
        assert set(versions) <= set(HANDLERS[key].supported), HANDLERS[key].api.name
