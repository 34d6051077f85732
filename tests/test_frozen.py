"""kafka_emu/frozen.py: the cheaper __init__ builds what attrs' own builds, and stays frozen; the
__repr__, __eq__ and __hash__ made on first use answer as attrs' own."""

from __future__ import annotations

import inspect

import attrs
import pytest

from kafka_emu.coordinator import commands, results
from kafka_emu.frozen import compile_init, fast_init, lazy_dunders, mutable_twin
from kafka_emu.protocol import APIS


def _pair():
    """The same declaration twice: one keeps attrs' __init__, one gets the cheaper one."""
    def declare():
        @attrs.frozen(kw_only=True)
        class C:
            a: int
            b: str = "x"
            c: list = attrs.field(factory=list)
            d: tuple = ()
        return C
    return declare(), fast_init(declare())


def test_same_instances_signature_and_errors_as_attrs():
    plain, fast = _pair()
    assert inspect.signature(fast.__init__) == inspect.signature(plain.__init__)  # before use
    for kwargs in ({"a": 1}, {"a": 2, "b": "y", "c": [1], "d": (2,)}):
        built, expected = fast(**kwargs), plain(**kwargs)
        assert attrs.asdict(built) == attrs.asdict(expected)
        assert type(built) is fast and "kafka_emu.frozen" in fast.__init__.__code__.co_filename
    assert inspect.signature(fast.__init__) == inspect.signature(plain.__init__)  # compiled
    assert fast(a=1).c is not fast(a=1).c  # a fresh factory value each time
    assert fast(a=1) == fast(a=1)
    heartbeat = results.HeartbeatResult(error=3)
    assert heartbeat == results.HeartbeatResult(error=3) and hash(heartbeat) == hash(
        results.HeartbeatResult(error=3))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fast(a=1).a = 2
    for bad in ({}, {"a": 1, "e": 2}):
        with pytest.raises(TypeError):
            fast(**bad)
    with pytest.raises(TypeError):
        fast(1)  # keyword-only, as attrs made it
    assert attrs.evolve(fast(a=1), b="z") == fast(a=1, b="z")


def test_positional_classes_keep_their_order():
    reply = results.Reply("r1", results.HeartbeatResult(error=0))
    assert (reply.request_id, reply.result.error) == ("r1", 0)
    assert list(inspect.signature(results.Reply.__init__).parameters) == [
        "self", "request_id", "result"]


@pytest.mark.parametrize("hook", ["validator", "converter", "post_init"])
def test_classes_that_need_attrs_init_keep_it(hook):
    if hook == "validator":
        @attrs.frozen
        class C:
            a: int = attrs.field(validator=attrs.validators.instance_of(int))
    elif hook == "converter":
        @attrs.frozen
        class C:
            a: int = attrs.field(converter=int)
    else:
        @attrs.frozen
        class C:
            a: int

            def __attrs_post_init__(self):
                object.__setattr__(self, "a", self.a * 2)
    init = C.__init__
    assert compile_init(C).__init__ is init
    fast_init(C)
    if hook == "validator":
        with pytest.raises(TypeError):
            C(a="1")
    else:
        assert C(a="1" if hook == "converter" else 2).a == (1 if hook == "converter" else 4)


def _classes():
    found = [c for m in (commands, results) for c in vars(m).values()
             if isinstance(c, type) and attrs.has(c) and c.__module__ == m.__name__]
    for api in APIS.values():
        found += [api.request, api.response]
    return found


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_declared_classes_build_their_defaults(cls):
    """Every command, result and message class built with only its required fields holds its
    declared defaults (fresh factory values), as attrs' __init__ would have set them."""
    required = {a.alias: object() for a in attrs.fields(cls) if a.default is attrs.NOTHING}
    positional = [a for a in attrs.fields(cls) if not a.kw_only]
    if positional:
        built = cls(*(required[a.alias] for a in positional))
    else:
        built = cls(**required)
    for a in attrs.fields(cls):
        value = getattr(built, a.name)
        if a.default is attrs.NOTHING:
            assert value is required[a.alias]
        elif isinstance(a.default, attrs.Factory):
            assert value == a.default.factory()
        else:
            assert value is a.default
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(built, attrs.fields(cls)[0].name, None)


def _lazy_pair():
    """The same declaration twice: attrs' own methods, and the ones made on first use."""
    def declare(lazy):
        @attrs.frozen(kw_only=True, repr=not lazy, eq=not lazy)
        class C:
            a: int
            b: str = "x"
            c: object = attrs.field(default=None, eq=False, repr=False)
            d: str = attrs.field(default="k", eq=str.lower, repr=lambda v: v.upper())
        return lazy_dunders(C) if lazy else C
    return declare(False), declare(True)


@pytest.mark.parametrize("first", ["repr", "eq", "ne", "hash"])
def test_lazy_dunders_answer_as_attrs_own(first):
    plain, lazy = _lazy_pair()
    stub = lazy.__eq__
    one, same, other = lazy(a=1, c=1, d="K"), lazy(a=1, c=2), lazy(a=2)
    {"repr": repr, "eq": lambda v: v == same, "ne": lambda v: v != same, "hash": hash}[first](one)
    assert lazy.__eq__ is not stub and lazy.__eq__.__code__.co_filename.startswith("<attrs")
    for a, b in ((one, same), (one, other), (same, other)):
        pa, pb = (plain(**attrs.asdict(v)) for v in (a, b))
        assert (a == b, a != b, repr(a)) == (pa == pb, pa != pb, repr(pa))
        assert (hash(a) == hash(b)) == (hash(pa) == hash(pb))
    assert one.__eq__(3) is NotImplemented and one != 3
    assert {one: "v"}[same] == "v" and lazy.__eq__(one, same)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        one.a = 2


def test_start_path_classes_compare_and_print_as_declared():
    """The classes a serve makes before its first answer (their stubs stay until then: see
    tests/protocol/test_api_index.py) compare, print and refuse to hash as attrs' own did."""
    from kafka_emu.broker.config import BrokerConfig
    from kafka_emu.coordinator import CoordinatorConfig
    from kafka_emu.protocol.schema import Api, FieldSpec
    from kafka_emu.protocol.versions import Versions

    for cls in (BrokerConfig, CoordinatorConfig, Api, FieldSpec, Versions,
                APIS[18].request, APIS[18].response):
        assert attrs.has(cls) and {"__eq__", "__ne__", "__hash__", "__repr__"} <= set(vars(cls))
    config = BrokerConfig(cluster_id="c")
    assert config == BrokerConfig(cluster_id="c") and config != BrokerConfig(cluster_id="d")
    assert repr(config).startswith("BrokerConfig(host='127.0.0.1', port=9092, node_id=1, ")
    with pytest.raises(TypeError):
        hash(config)  # a dict field, as with attrs' own __hash__


def test_lazy_dunders_made_once_when_threads_race():
    """One __hash__ for every thread: an instance hashed in one is found from another."""
    import threading

    _, lazy = _lazy_pair()
    value, barrier, hashes = lazy(a=1), threading.Barrier(8), []

    def first_use():
        barrier.wait()
        hashes.append(hash(value))

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(hashes)) == 1 and hash(value) == hashes[0]


def test_mutable_twin_builds_the_same_frozen_instances():
    """What the one-partition OffsetCommit path builds in twins (handler, coordinator) is what
    calling the class builds: same class, fields, equality, hash; still frozen."""
    from kafka_emu.coordinator.offsets_store import StoredOffset
    for cls, values in ((commands.CommitOffset, dict(topic="t", partition=1, offset=5,
                                                      leader_epoch=-1, metadata=None)),
                        (StoredOffset, dict(offset=5, leader_epoch=2, metadata="m",
                                            commit_timestamp_ms=10, expire_timestamp_ms=None))):
        twin = mutable_twin(cls)
        assert twin is not None
        built = twin()
        for name, value in values.items():
            setattr(built, name, value)
        built.__class__ = cls
        expected = cls(**values)
        assert type(built) is cls and built == expected and hash(built) == hash(expected)
        assert attrs.asdict(built) == attrs.asdict(expected)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            built.offset = 6  # type: ignore[misc]

    @attrs.frozen
    class Validated:
        a: int = attrs.field(validator=attrs.validators.instance_of(int))
    assert mutable_twin(Validated) is None  # needs attrs' own __init__
