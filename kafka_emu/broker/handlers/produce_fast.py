"""Produce's fast path: a usual request appended and answered straight from its frame.

The decoder leaves a Produce (v7+) of the usual shape in its frame (protocol/produce_scan.py:
``topic_data`` is an UndecodedTopics of name and records positions). When nothing but the
append itself can make a partition's answer differ from a plain success, :func:`answer` appends
each partition's records (a view into the frame) and writes the answers' bytes as it goes,
instead of building a PartitionProduceData, a PartitionProduceResponse and its record_errors
list per partition and encoding them again. The topics' bytes become the response's
``responses`` as an EncodedArray (protocol/preencoded.py), so the response is still a
ProduceResponse, encoded by the generated writer; its elements are decoded from those bytes
only if someone reads them.

It declines (returns NOT_TAKEN, having changed nothing) unless:
* acks is 0, 1 or -1 (anything else is the generic path's INVALID_REQUIRED_ACKS);
* no fault rule or ACL is in force (they act on the request as the generic path reads it).
  Observers are no reason to decline: a request record reads the request's topics and the
  response's the same (both decode from their bytes on first reading, equal to the generic
  path's objects; a Produce is recorded as a row, never by its frames or by reference,
  broker/event_rows.py), and the test compares the rows;
* every topic is known, not internal, and every partition index is one it has, led by this
  broker (``serve --brokers N``: Cluster.partition_error);
* no batch carries the transactional bit (without a transactional id the whole request is
  refused; that is the generic path's).
Then the only per-partition outcomes left are the log's own (a wrong CRC, a sequence out of
order, a keyless record on a compacted topic, ...): such a partition's answer is the generic
path's ``_failed`` answer, written by its generated writer -- the same bytes. The generic
handler is the reference: tests/broker/test_produce_fast.py checks both give the same bytes
and the same logs.
"""

from __future__ import annotations

import struct
import uuid

from ...errors import KafkaError
from ...frozen import mutable_twin
from ...log.batch import NO_TIMESTAMP
from ...log.catalogue import INTERNAL_TOPICS
from ...protocol.codegen import plan_for
from ...protocol.messages.produce import (PartitionProduceResponse, ProduceResponse,
                                          TopicProduceResponse)
from ...protocol.preencoded import element_plan, encoded_elements
from ...protocol.primitives import write_uvarint

NOT_TAKEN = object()
# a successful partition's answer at v9+: index, error code 0, base offset, log append time, log
# start offset, then an empty record_errors array (1: count plus one), a null error message
# and no tagged fields (the current leader, v10+, is not written for a success)
_SUCCEEDED = struct.Struct(">ihqqqBBB").pack
# v7-8: the five fields, then at v8 an empty record_errors (int32 0) and a null error message
# (int16 -1); counts are int32
_SUCCEEDED_CLASSIC = struct.Struct(">ihqqq").pack
_CLASSIC_TAIL = struct.pack(">ih", 0, -1)
_COUNT = struct.Struct(">i").pack
_BuildingResponse = mutable_twin(ProduceResponse)  # the response by plain slot stores
_TOPIC_PLANS: dict = {}  # version -> the plan the response's topics are written by
_TRANSACTIONAL = 0x10  # the batch attributes' transactional bit (the low byte, at offset 22)


def _failed_bytes(out: bytearray, name: str, index: int, exc: KafkaError, version: int) -> None:
    """The generic path's answer for a partition whose append failed, by its own writer."""
    from .produce import _failed  # (produce.py imports this module)

    plan_for(PartitionProduceResponse, version, version >= 9).write(
        out, _failed(name, index, exc, version))


def answer(ctx, request, undecoded):
    """The response (None for acks 0) or NOT_TAKEN; see the module docstring."""
    broker = ctx.broker
    acks = request.acks
    if (acks != 1 and acks != -1 and acks != 0) or broker.faults is not None \
            or broker.authorizer is not None:
        return NOT_TAKEN
    frame = undecoded.frame
    topics = broker.topics
    catalogue = topics.catalogue
    cluster = broker.cluster
    multi = cluster.multi
    node_id = ctx.connection.node_id
    version = ctx.version
    by_id = version >= 13
    get = catalogue.get
    found = []  # (name, logs) per topic entry
    for _, _, name, parts in undecoded.topics:
        if by_id:
            topic = catalogue.get_by_id(uuid.UUID(bytes=name))
            if topic is None:
                return NOT_TAKEN
            name = topic.name
        else:
            topic = get(name)
            if topic is None:
                return NOT_TAKEN
        if name in INTERNAL_TOPICS:
            return NOT_TAKEN
        logs = topic.partitions
        count = len(logs)
        for index, start, end in parts:
            if not 0 <= index < count:
                return NOT_TAKEN
            if end - start >= 61 and frame[start + 22] & _TRANSACTIONAL:
                return NOT_TAKEN
            if multi and cluster.partition_error(node_id, topic.topic_id, name, index) \
                    is not None:
                return NOT_TAKEN
        found.append((name, logs))
    flexible = version >= 9
    tail = _CLASSIC_TAIL if version >= 8 else b""  # v8: record_errors and error_message
    view = memoryview(frame)
    out = bytearray()
    appended = []  # the logs written: their waiting fetches are woken
    now = None  # read from the clock only for a LogAppendTime topic, as the generic path
    position = 0
    for start_name, end_name, _, parts in undecoded.topics:
        name, logs = found[position]
        position += 1
        out += view[start_name:end_name]  # the name as sent (a known name: valid UTF-8), or id
        count = len(parts)
        if not flexible:
            out += _COUNT(count)
        elif count < 127:
            out.append(count + 1)
        else:
            write_uvarint(out, count + 1)
        for index, start, end in parts:
            log = logs[index]
            base_offset = log.append_plain(view, start, end)
            if base_offset >= 0:  # a plain batch: appended, nothing else to answer
                appended.append(log)
                if flexible:
                    out += _SUCCEEDED(index, 0, base_offset, -1, log.log_start_offset, 1, 0, 0)
                else:
                    out += _SUCCEEDED_CLASSIC(index, 0, base_offset, -1, log.log_start_offset)
                    out += tail
                continue
            try:
                # (TimestampType is an IntEnum, CREATE_TIME 0: true for LOG_APPEND_TIME only)
                if now is None and log.config.timestamp_type:
                    now = ctx.now_ms()
                base_offset, _, append_time, log_start, duplicate = log.append(
                    view[start:end], NO_TIMESTAMP if now is None else now)
            except KafkaError as exc:
                _failed_bytes(out, name, index, exc, version)
                continue
            if not duplicate:
                appended.append(log)
            if flexible:
                out += _SUCCEEDED(index, 0, base_offset, append_time, log_start, 1, 0, 0)
            else:
                out += _SUCCEEDED_CLASSIC(index, 0, base_offset, append_time, log_start)
                out += tail
        if flexible:
            out.append(0)  # the topic's tagged fields
    if appended:
        topics.notify_append(appended)
    if acks == 0:
        return None  # Kafka sends nothing back for acks=0
    plan = _TOPIC_PLANS.get(version)
    if plan is None:
        plan = _TOPIC_PLANS[version] = element_plan(ProduceResponse, version,
                                                    TopicProduceResponse)
    return produce_response(encoded_elements(plan, position, out))


def produce_response(responses: list) -> ProduceResponse:
    """The ProduceResponse of these topic answers (this path's and produce.py's), built by
    plain slot stores in its mutable twin."""
    if _BuildingResponse is None:  # (the class grew something mutable_twin cannot reproduce)
        return ProduceResponse(responses=responses, throttle_time_ms=0, node_endpoints=[])
    response = _BuildingResponse()
    response.responses = responses
    response.throttle_time_ms = 0
    response.node_endpoints = []
    response.__class__ = ProduceResponse
    return response
