"""Share sessions as Kafka 4.2's ShareSessionCache keeps them."""

import uuid

import pytest

from kafka_emu.coordinator.share.sessions import (MAX_EPOCH, SessionError, ShareSessionCache,
                                                  next_epoch)
from kafka_emu.errors import ErrorCode

T = uuid.uuid4()


def code(fn, *a, **kw):
    with pytest.raises(SessionError) as err:
        fn(*a, **kw)
    return err.value.code


def fetch(cache, member, epoch, wanted=(), forgotten=(), acks=False, conn=1):
    return cache.fetch_context("g", member, epoch, connection_id=conn, wanted=list(wanted),
                               forgotten=list(forgotten), has_acks=acks)


def test_full_then_incremental_with_forgotten_partitions():
    cache = ShareSessionCache()
    ctx = fetch(cache, "m", 0, [(T, 0), (T, 1)])
    assert ctx.full and not ctx.final and list(ctx.session.partitions) == [(T, 0), (T, 1)]
    ctx = fetch(cache, "m", 1, [(T, 2)], forgotten=[(T, 0)])
    assert not ctx.full and list(ctx.session.partitions) == [(T, 1), (T, 2)]
    assert cache.acknowledge_context("g", "m", 2).session is ctx.session
    assert ctx.session.epoch == 3


def test_errors():
    cache = ShareSessionCache(max_sessions=1)
    assert code(fetch, cache, "m", 1) == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert code(fetch, cache, "m", -1) == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert code(fetch, cache, "m", 0, acks=True) == ErrorCode.INVALID_REQUEST
    fetch(cache, "m", 0)
    assert code(fetch, cache, "m", 2) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert code(fetch, cache, "m", -2) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert code(fetch, cache, "other", 0) == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    fetch(cache, "m", 0)  # replacing one's own session is not refused
    assert code(cache.acknowledge_context, "g", "m", 0) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert code(cache.acknowledge_context, "g", "x", 1) == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert cache.acknowledge_context("g", "m", -1).final


def test_epochs_wrap_to_one_and_sessions_die_with_their_connection():
    assert next_epoch(MAX_EPOCH) == 1 and next_epoch(1) == 2
    cache = ShareSessionCache()
    fetch(cache, "a", 0, conn=7)
    fetch(cache, "b", 0, conn=8)
    assert [s.member_id for s in cache.closed_connection(7)] == ["a"]
    assert cache.get("g", "a") is None and cache.get("g", "b") is not None
