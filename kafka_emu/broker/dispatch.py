"""One request frame in, its response out: the per-request path of the Kafka port.

``handle_frame`` is what the connection loop (connection.py) calls for every frame, in order:

1. a SASL listener's authenticator may answer first (security/sasl.py);
2. the header's api key and version are peeked, and checked against the advertised ranges --
   an unknown api or version closes the connection (CloseConnection), except ApiVersions, which
   KIP-511 answers in v0 with our range;
3. the body is decoded, the RequestContext made, ACLs checked (security/authorize.py), a
   control-plane fault rule matched (fault_actions.py);
4. the handler runs; a KafkaError becomes the API's error response (error_response.py), and a
   request parked in the coordinator comes back as its ``Pending``, with just what answering it
   later needs (request_facts.py) -- the loop waits for it;
5. if anything observes the broker, the request is recorded -- by its frames, by reference, or
   as a row, whichever is cheapest for that request kind (event_rows.py, frame_rows.py);
6. the response is encoded (a Fetch's as parts, its stored batches unjoined), unless a fault
   closes the connection instead or throttles the client (KIP-219: answer, then stop reading).

This is the hottest function of the server: every name it uses is a module global bound by
``from ... import`` (one dict lookup, no attribute walk through a module), and the few Python
calls per request are counted (bench/callgrind_wire.py); keep it one function.
"""

from __future__ import annotations

import logging
from functools import partial

import trio

from ..errors import KafkaError
from ..protocol.headers import decode_request, encode_response, encode_response_parts, peek_api
from .clock import perf_now
from .connection_io import CloseConnection, Connection
from .context import ConnectionInfo, RequestContext
from .error_response import error_response
from .event_rows import (COMMIT_FRAME, REQUEST_FRAME, REQUEST_REFS, REQUEST_ROWS, committed_row,
                         request_row_maker)
from .fault_actions import FaultClose, carry_out
from .handlers import HANDLERS
from .handlers.api_versions import unsupported_version_response
from .request_facts import parked_request
from .state import Broker, Pending
from .throttle import client_throttles

log = logging.getLogger("kafka_emu")

API_VERSIONS = 18
FETCH = 1  # its responses carry stored batches, written as they are (encode_response_parts)
_new = object.__new__
_NO_MAKERS: dict = {}  # (REQUEST_ROWS for a request class not seen yet)
# A request recorded by its frames (event_rows.py's REQUEST_FRAME) when they are no larger than
# this together; a larger one (a commit of many partitions, a big group's description) as its
# row, whose size grows with the partitions it names, not with every byte of both frames.
FRAME_RECORD_LIMIT = 4096


def _identity(conn: Connection, info: ConnectionInfo) -> tuple:
    """The connection's part of a record by frame (event_rows.REQUEST_FRAME), made once: one
    tuple that every record of the connection shares (marshal writes it once per message, then
    a reference), until ApiVersions announces the client's software (handlers/api_versions.py
    sets it back to None)."""
    identity = info.trace_identity = (conn.id, conn.peer, info.client_software_name,
                                      info.client_software_version)
    return identity


async def handle_frame(broker: Broker, conn: Connection, info: ConnectionInfo,
                       frame: bytes) -> bytearray | list | None:
    observation = broker.observation
    # Observed, one clock reading per request: the one that ends the previous request of this
    # batch (or the batch's own, serve_connection) starts this one -- as on Kafka, which reads a
    # request only once the previous one is answered; the encoding of that previous response (a
    # µs or two) is in the latency. None: not observed when the batch began.
    started = observation.mark
    if conn.auth is not None:  # SASL: the authenticator answers or lets the request pass
        answer = await conn.auth.gate(conn, info, frame)
        if answer is not None:
            return answer
    api_key, version, correlation_id = peek_api(frame)
    try:
        handler = HANDLERS[api_key]  # (a loaded entry: a plain dict lookup, no call of ours)
    except KeyError:
        raise CloseConnection(f"unknown api key {api_key}", "unknown api key") from None
    api = handler.api
    supported = broker.advertised.get(api_key)
    # (Versions.__contains__ written out: one Python call less per request)
    if supported is None or not supported.lo <= version <= supported.hi:
        if api_key == API_VERSIONS:
            # KIP-511: answer in v0 with UNSUPPORTED_VERSION and our ApiVersions range, unparsed.
            return encode_response(api, 0, correlation_id,
                                   unsupported_version_response(broker))
        raise CloseConnection(f"unsupported {api.name} version {version} "
                              f"(supported {supported or 'none'})", "unsupported version")
    header, request, trailing = decode_request(api, version, frame)
    if started is None:  # unobserved: let it go (a leader's SyncGroup for 5000: ~300 KB)
        frame = None  # type: ignore[assignment]  # (observed: its record may keep it)
    if trailing:
        # Kafka's request parser ignores bytes after the body, and real clients rely on it:
        # librdkafka 2.16 sends Metadata v13 with three extra bytes (list_topics()).
        log.debug("%s: ignoring %d bytes after %s v%d", info.peer, trailing, api.name, version)
    # RequestContext(...) as plain slot stores: its class (attrs.define, no validators or
    # converters) has no __setattr__ of its own, and a call with keywords packs them in a dict
    ctx = _new(RequestContext)
    ctx.broker = broker
    ctx.api = api
    ctx.version = version
    ctx.correlation_id = correlation_id
    ctx.client_id = header.client_id or ""
    ctx.connection = info
    ctx.request_id = broker.new_request_id()
    ctx.deferrable = True
    if broker.authorizer is not None:  # ACLs: one check before the handler, by Kafka's table
        from ..security.authorize import guarded
        handler = guarded(handler)
    faults = broker.faults  # None unless a control-plane fault rule can fire
    fault = (faults.match(api_key, version, ctx.client_id, request, info.principal, info.listener)
             if faults is not None else None)
    if fault is None:
        try:
            response = await handler.fn(ctx, request)
        except KafkaError as exc:
            # Kafka's handleError: the request fails as a whole, answered in its own shape
            response = error_response(api, version, request, exc.code, exc.message)
        if response.__class__ is Pending:
            # the connection waits for the answer (serve_connection), then responds
            # through answer_parked with what is kept here
            # what its RequestHandled row reads, not the whole decoded request (request_facts.py),
            # sharing the group's and the member's strings
            facts = parked_request(request)
            if facts is not request:
                facts.group_id, facts.member_id, response.client_id = (
                    broker.coordinator.own_ids(facts.group_id, facts.member_id,
                                               header.client_id))
            else:
                response.client_id = header.client_id
            response.request, response.started, response.api_key = facts, started, api_key
            response.version, response.correlation_id = version, correlation_id
            return response
    else:
        ctx.deferrable = False  # the fault's action may still run after the handler
        response = await carry_out(broker, conn, ctx, handler, request, fault)
    emit = observation.emit  # a sink may have subscribed while the request was parked
    data = None  # the response frame, once made
    if emit is not None:
        # RequestHandled as a row (event_rows.py): the same fields, without building the object
        done = perf_now()
        # The next request starts when this one ends -- an equal float, not this one: a float
        # two records share (this one's done, the next one's started) is an object marshal
        # must enter in its table of shared objects and look up again when the writer packs
        # them, about a third of a record's marshal (trace/writer.py); a float of its own is
        # written as it is
        observation.mark = done + 0.0
        if (version <= observation.by_frame.get(type(request), -1) and started is not None
                and fault is None):  # (a Heartbeat, a commit, traced alone: frame_rows.py)
            data = encode_response(api, version, correlation_id, response)
            if len(data) + len(frame) <= FRAME_RECORD_LIMIT:
                record = (REQUEST_FRAME, frame, data, started, done,  # (at_ms, latency when read)
                          broker.clock.ms_constants or broker.clock.ms_at(done),
                          info.trace_identity or _identity(conn, info))
                if observation.commit_at is not None:
                    # a commit whose OffsetsCommitted the coordinator left to this record: it
                    # comes first, as the coordinator's row would, the same record inside it
                    # (marshal writes it once, then a reference)
                    emit((COMMIT_FRAME, record, observation.commit_at))
                    observation.commit_at = None
                emit(record)
                return data
        if observation.commit_at is not None:  # (such a commit, its frames past the limit)
            emit(committed_row(request, observation.commit_at))
            observation.commit_at = None
        if type(request) in observation.by_reference:  # (a Heartbeat, with the timeline alone)
            emit((REQUEST_REFS, request, response, started, done,  # (ms_later: at_ms when read)
                  broker.clock.ms_later or broker.clock.ms_at(done), conn.id, conn.peer,
                  api.name, api_key, version, correlation_id, header.client_id,
                  info.client_software_name, info.client_software_version))
        elif ((read := observation.by_answer.get(type(request))) is not None
              and fault is None and started is not None and len(frame) <= FRAME_RECORD_LIMIT
              and (answer := read(request, response)) is not None):
            # (a Fetch, traced alone: its frame and the row's share of the answer, frame_rows.py)
            emit((REQUEST_FRAME, frame, answer, started, done,
                  broker.clock.ms_constants or broker.clock.ms_at(done),
                  info.trace_identity or _identity(conn, info)))
        else:
            make = (REQUEST_ROWS.get(type(request), _NO_MAKERS).get(type(response))
                    or request_row_maker(type(request), type(response)))
            cache = broker.clock.ms_cache  # (Clock.ms_at, its answer within the millisecond)
            emit(make(request, response, (done - started) * 1000 if started is not None else 0.0,
                      broker.topics,
                      cache[2] if cache[0] <= done < cache[1] else broker.clock.ms_at(done),
                      conn.id, conn.peer, api.name, api_key, version, correlation_id,
                      header.client_id, info.client_software_name, info.client_software_version))
    if fault is not None and fault.action == "close_after":
        # applied (and recorded above), but the client never sees the answer
        raise FaultClose(f"closed by fault rule {fault.rule_id} after {api.name} was applied")
    if response is None:
        return None
    if data is None:
        data = (encode_response_parts if api_key == FETCH else encode_response)(
            api, version, correlation_id, response)
    if fault is not None and fault.action == "throttle" and client_throttles(api.name, version):
        # KIP-219: answer at once, then read nothing more from this client for the throttle time
        conn.enqueue(data)
        await conn.park(partial(trio.sleep, fault.delay_ms / 1000))
        if observation.emit is not None:  # the next request's latency starts after the throttle
            observation.mark = perf_now()
        return None
    return data
