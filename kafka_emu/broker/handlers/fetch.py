"""Fetch v4-18: v5 log start offset; v7 fetch sessions (KIP-227: incremental fetches, as
Kafka answers them; broker/fetch_sessions.py); v11 rack / preferred
replica; v12 flexible; v13 topic ids instead of names; v15 replica state; v18 a follower's
high watermark (KIP-1166), which a consumer leaves at its default and the leader has no use for here.

In a cluster, a partition this broker does not lead is NOT_LEADER_OR_FOLLOWER, and a
current_leader_epoch (v9+) behind or ahead of the leader's is FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH (broker/cluster.py).

Whole batches from each partition's fetch offset, bounded by partition_max_bytes and the
response's max_bytes, but the first partition with data returns at least one batch even if it
is larger (Kafka's minOneMessage). Until min_bytes are available the request waits up to
max_wait_ms, woken by a Produce to one of the partitions it read (Topics.watch), never by
polling; a wake-up re-reads only the partitions whose logs moved while nothing was there to
return (``_read_changed``), so a consumer of many partitions pays per partition that changed,
not per partition it reads. The batches are never joined or copied here: each partition's records are the stored ``bytes`` objects in a
RecordsParts, which the connection writes to the socket as they are (protocol/spliced.py).

Isolation level 1 (read_committed, v4+): only batches below each partition's last stable
offset, with the aborted transactions overlapping the batches returned (producer id, first
offset), as UnifiedLog.read(maxOffset = LSO) with addAbortedTransactions; an empty read gets an
empty list. read_uncommitted gets null. last_stable_offset is reported at either level.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...frozen import mutable_twin
from ...protocol.codegen import shared_default
from ...protocol.messages.fetch import (API, AbortedTransaction, EpochEndOffset,
                                        FetchableTopicResponse, FetchResponse, LeaderIdAndEpoch,
                                        PartitionData, SnapshotId)
from ...protocol.spliced import RecordsParts
from ..fetch_sessions import FINAL_EPOCH, INITIAL_EPOCH, NO_SESSION, SessionRequest
from . import Handler

READ_COMMITTED = 1
_new = object.__new__


def uses_topic_ids(version: int) -> bool:
    return version >= 13


# The tagged fields a consumer's fetch never gets, shared (frozen) rather than built for every
# partition of every answer by the struct defaults' factories: the writer's own defaults, which
# it recognises by identity (no field-by-field comparison per partition).
_NO_DIVERGING_EPOCH = shared_default(EpochEndOffset)
_NO_CURRENT_LEADER = shared_default(LeaderIdAndEpoch)
_NO_SNAPSHOT = shared_default(SnapshotId)
_NONE = ErrorCode.NONE
# a partition's answer is built in the mutable twin (plain slot stores, then its real class), as
# Produce builds its partitions' (produce.py): one per partition of every Fetch, a long poll's
# caught-up partitions included
_Building = mutable_twin(PartitionData)
# The last answer this handler built with no error in it (top level or partition, no throttle)
# and every topic it names found live: a trace records such an answer as "no errors" without
# walking it again (frame_rows.answer_reader's ``vouched``; a Fetch traced costs that walk --
# loops, isinstance calls -- on every request). Compared by identity: an answer changed after
# the handler (an ACL's denials merged, a fault) is a new object, and a stale entry is never
# equal to a later answer. It keeps that one answer alive until the next (its records are the
# logs' own bytes, not copies).
VOUCHED: list = [None]
# and, once per request, each topic's answer and the response itself, the same way
_BuildingTopic = mutable_twin(FetchableTopicResponse)
_BuildingResponse = mutable_twin(FetchResponse)


def _topic_answer(topic: str, topic_id, parts: list) -> FetchableTopicResponse:
    if _BuildingTopic is None:
        return FetchableTopicResponse(topic=topic, topic_id=topic_id, partitions=parts)
    answer = _BuildingTopic()
    answer.topic = topic
    answer.topic_id = topic_id
    answer.partitions = parts
    answer.__class__ = FetchableTopicResponse
    return answer


def _response(responses: list, session_id: int = 0) -> FetchResponse:
    if _BuildingResponse is None:
        return FetchResponse(throttle_time_ms=0, error_code=_NONE, session_id=session_id,
                             responses=responses, node_endpoints=[])
    answer = _BuildingResponse()
    answer.throttle_time_ms = 0
    answer.error_code = _NONE
    answer.session_id = session_id
    answer.responses = responses
    answer.node_endpoints = []
    answer.__class__ = FetchResponse
    return answer


def _error(index: int, code: ErrorCode) -> PartitionData:
    return PartitionData(partition_index=index, error_code=code, high_watermark=-1,
                         last_stable_offset=-1, log_start_offset=-1, records=b"",
                         diverging_epoch=_NO_DIVERGING_EPOCH, current_leader=_NO_CURRENT_LEADER,
                         snapshot_id=_NO_SNAPSHOT)


def _read_all(ctx, request, slots: list | None = None, seen: list | None = None
              ) -> tuple[list[FetchableTopicResponse], int, bool]:
    """Every partition's answer, the bytes returned and whether any partition failed;
    ``slots``, if given, gets (partitions answer list, its index there, log, fetch partition)
    for each partition read from a log -- what a waiting fetch watches and re-reads -- and
    ``seen`` (topic name or id, topic) for each topic found. Each
    partition's read is kept short: its topic is looked up once per topic, and a partition
    fetched at its high watermark is not read."""
    catalogue = ctx.broker.topics.catalogue
    cluster = ctx.broker.cluster
    multi = cluster.multi
    node_id = ctx.connection.node_id
    by_id = uses_topic_ids(ctx.version)
    budget = request.max_bytes
    min_one = True
    total = 0
    failed = False
    responses = []
    committed = request.isolation_level == READ_COMMITTED
    for t in request.topics:
        parts: list = []
        if by_id:
            topic = catalogue.get_by_id(t.topic_id)
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = catalogue.get(t.topic)
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if topic is None:
            partitions = ()
        else:
            partitions = topic.partitions
            if seen is not None:
                seen.append((t.topic_id if by_id else t.topic, topic))
        count = len(partitions)
        for p in t.partitions:
            index = p.partition
            if not 0 <= index < count:
                parts.append(_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                                    if topic is not None else missing))
                failed = True
                continue
            log = partitions[index]
            if multi:
                refused = cluster.partition_error(node_id, topic.topic_id, topic.name, index,
                                                  p.current_leader_epoch)
                if refused is not None:
                    parts.append(_error(index, refused))
                    failed = True
                    continue
            if slots is not None:
                slots.append((parts, len(parts), log, p))
            # (min and max as comparisons: in CPython 3.11 each builtin call costs about 1.1k
            # instructions, twice per partition of every Fetch)
            limit = p.partition_max_bytes
            if limit > budget:
                limit = budget
            offset = p.fetch_offset
            hwm = log.high_watermark
            if (committed and offset != hwm and (log.txns.ongoing or log.txns.aborted)) \
                    or _Building is None or not log.log_start_offset <= offset <= hwm:
                answer, size = _read_one(log, p, committed, limit, min_one)
            else:
                # _read_one's usual case written out (a Python call with its tuple is about 750
                # instructions, once per partition): an offset in range, so the read cannot
                # fail; at read_committed (librdkafka's default) also nothing to read, or a log
                # that never had a transaction open or aborted: its last stable offset is its
                # high watermark and no aborted transaction can overlap, so read_committed's
                # read is this one, with an empty aborted list
                if offset == hwm:  # caught up: nothing to read
                    size = 0
                else:
                    batches, size, hwm = log.read_sized(offset, limit, min_one=min_one)
                answer = _Building()
                answer.partition_index = p.partition
                answer.error_code = _NONE
                answer.high_watermark = hwm
                answer.last_stable_offset = log.last_stable_offset if log.txns.ongoing else hwm
                answer.log_start_offset = log.log_start_offset
                answer.diverging_epoch = _NO_DIVERGING_EPOCH
                answer.current_leader = _NO_CURRENT_LEADER
                answer.snapshot_id = _NO_SNAPSHOT
                answer.aborted_transactions = [] if committed else None
                answer.preferred_read_replica = -1
                if size:
                    records = _new(RecordsParts)
                    records.parts = batches
                    records.size = size
                    answer.records = records
                else:
                    answer.records = b""
                answer.__class__ = PartitionData
            parts.append(answer)
            if size:
                min_one = False
                budget = budget - size if size < budget else 0
                total += size
            elif answer.error_code:
                failed = True
        responses.append(_topic_answer(t.topic if not by_id else "", t.topic_id, parts))
    return responses, total, failed


def _read_one(log, p, committed: bool, limit: int, min_one: bool) -> tuple[PartitionData, int]:
    """One partition's answer from ``log`` and the bytes in it."""
    offset = p.fetch_offset
    hwm = log.high_watermark
    aborted = None
    if offset == hwm:  # caught up: nothing to read (in range: hwm >= the log start)
        size = 0
        if committed:
            aborted = []
    else:
        try:
            if committed:
                batches, size, hwm, found = log.read_committed(offset, limit, min_one=min_one)
                aborted = [AbortedTransaction(producer_id=a.producer_id,
                                              first_offset=a.first_offset) for a in found]
            else:
                batches, size, hwm = log.read_sized(offset, limit, min_one=min_one)
        except KafkaError as exc:
            return _error(p.partition, exc.code), 0
    if _Building is None:  # (the class grew something mutable_twin cannot reproduce)
        return PartitionData(
            partition_index=p.partition, error_code=_NONE, high_watermark=hwm,
            last_stable_offset=log.last_stable_offset if log.txns.ongoing else hwm,
            log_start_offset=log.log_start_offset, aborted_transactions=aborted,
            records=RecordsParts(batches, size) if size else b"",
            diverging_epoch=_NO_DIVERGING_EPOCH, current_leader=_NO_CURRENT_LEADER,
            snapshot_id=_NO_SNAPSHOT), size
    answer = _Building()
    answer.partition_index = p.partition
    answer.error_code = _NONE
    answer.high_watermark = hwm
    # (no open transaction: the high watermark, without the property's calls)
    answer.last_stable_offset = log.last_stable_offset if log.txns.ongoing else hwm
    answer.log_start_offset = log.log_start_offset
    answer.diverging_epoch = _NO_DIVERGING_EPOCH
    answer.current_leader = _NO_CURRENT_LEADER
    answer.snapshot_id = _NO_SNAPSHOT
    answer.aborted_transactions = aborted
    answer.preferred_read_replica = -1
    if size:  # the stored batches go to the socket as they are (protocol/spliced.py)
        # RecordsParts(batches, size) as slot stores: its __init__ is a Python frame
        records = _new(RecordsParts)
        records.parts = batches
        records.size = size
        answer.records = records
    else:
        answer.records = b""
    answer.__class__ = PartitionData
    return answer, size


def _read_changed(ctx, request, slots: list, seen: list) -> int | None:
    """After a wake-up, re-read only the partitions whose log moved since an empty read (every
    partition answered with no records and no error): an unmoved partition's answer -- high
    watermark, log start, last stable offset, no records -- is the one it already has, and an
    empty partition takes nothing from max_bytes, so this answers as a full read would. The
    bytes now returned; None where a full read must decide (a topic deleted or re-created, a
    log start moved: records deleted, perhaps from under the fetch offset)."""
    catalogue = ctx.broker.topics.catalogue
    lookup = catalogue.get_by_id if uses_topic_ids(ctx.version) else catalogue.get
    for key, topic in seen:
        if lookup(key) is not topic:
            return None
    committed = request.isolation_level == READ_COMMITTED
    budget = request.max_bytes
    min_one = True
    total = 0
    for parts, i, log, p in slots:
        old = parts[i]
        if log.high_watermark == old.high_watermark:  # (an append, a marker: it moves)
            if log.log_start_offset != old.log_start_offset:
                return None
            continue
        limit = p.partition_max_bytes  # (min and max as comparisons: see _read_all)
        answer, size = _read_one(log, p, committed, limit if limit < budget else budget, min_one)
        if answer.error_code:
            return None
        parts[i] = answer
        if size:
            min_one = False
            budget = budget - size if size < budget else 0
            total += size
    return total


async def fetch(ctx, request) -> FetchResponse:
    if request.session_epoch == FINAL_EPOCH and request.session_id == NO_SESSION:
        return await _fetch_all(ctx, request)  # sessionless (and every v4-6 fetch)
    return await _in_session(ctx, request)


async def _in_session(ctx, request) -> FetchResponse:
    """A fetch that opens, uses or closes a fetch session (broker/fetch_sessions.py)."""
    cache = ctx.broker.fetch_sessions
    node_id = ctx.connection.node_id
    epoch, session_id = request.session_epoch, request.session_id
    by_ids = uses_topic_ids(ctx.version)
    if epoch == FINAL_EPOCH or epoch == INITIAL_EPOCH:  # a full fetch
        if session_id != NO_SESSION:
            cache.remove(node_id, session_id)
        answer = await _fetch_all(ctx, request)
        if epoch == FINAL_EPOCH:
            return answer
        session = cache.create(node_id, by_ids, sum(len(t.partitions) for t in request.topics))
        if session is None:  # no room: the client goes on without one
            return answer
        session.remember(answer.responses, session.update(request.topics))
        return _in_answer(answer, session.id, answer.responses)
    session = cache.get(node_id, session_id)
    if session is None:
        return _session_error(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    if epoch != session.epoch:
        return _session_error(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    if session.by_ids != by_ids:  # (a client that changed versions within the session)
        return _session_error(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    session.update(request.topics, request.forgotten_topics_data)
    session.used(epoch)
    topics, order = session.topics()
    answer = await _fetch_all(ctx, SessionRequest(request, topics))
    return _in_answer(answer, session.id, session.changed(answer.responses, order))


def _in_answer(answer: FetchResponse, session_id: int, responses: list) -> FetchResponse:
    """``answer`` as a session's: its id, and the topics given (a vouched answer stays so)."""
    made = _response(responses, session_id)
    if VOUCHED[0] is answer:
        VOUCHED[0] = made
    return made


def _session_error(code: ErrorCode) -> FetchResponse:
    return FetchResponse(throttle_time_ms=0, error_code=code, session_id=NO_SESSION,
                         responses=[], node_endpoints=[])


async def _fetch_all(ctx, request) -> FetchResponse:
    """The answer to a full fetch of ``request``'s partitions (a session's: all of its)."""
    topics = ctx.broker.topics
    wanted = request.min_bytes if request.min_bytes > 1 else 1
    slots: list = []
    seen: list = []
    responses, total, failed = _read_all(ctx, request, slots, seen)
    if total < wanted and not failed and request.max_wait_ms > 0:
        # watched from the read on (no await between): no append to these logs is missed.
        # Wall time, also under the control plane's clock: an I/O wait, not group semantics.
        watch = topics.watch([s[2] for s in slots], request.max_wait_ms / 1000)
        # a wake-up re-reads only the logs that moved (_read_changed) while the last read was
        # empty, and a single broker's answer depends on nothing else (in a cluster, a
        # leadership may move under any partition: every read is a full one)
        changed_only = not ctx.broker.cluster.multi
        try:
            while True:
                await ctx.park(watch)  # until an append to one of them, or max_wait_ms
                if not watch.woken:  # max_wait_ms is up: whatever is there now
                    # after an empty read, as after a wake-up: only the logs that moved since
                    # (an idle consumer of many partitions is answered thus twice a second)
                    if changed_only and not total and \
                            _read_changed(ctx, request, slots, seen) is not None:
                        break
                    seen = []
                    responses, _, failed = _read_all(ctx, request, None, seen)
                    break
                watch.woken = False
                found = (_read_changed(ctx, request, slots, seen) if changed_only and not total
                         else None)
                if found is None:
                    slots, seen = [], []
                    responses, total, failed = _read_all(ctx, request, slots, seen)
                    if failed:
                        break
                else:
                    total = found
                if total >= wanted:
                    break
        finally:
            topics.unwatch(watch)
    answer = _response(responses)
    if not failed and len(seen) == len(request.topics):  # (a topic not found has no entry)
        VOUCHED[0] = answer
    return answer


HANDLER = Handler(API, "4-18", fetch)
