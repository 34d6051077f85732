"""What RequestHandled reads of a parked request, kept in place of the decoded request.

A JoinGroup or SyncGroup parked in the coordinator is answered later by its connection, which
then emits RequestHandled for it (``answer_parked``). Five thousand members forming
a group park 5000 at once, and a decoded JoinGroup -- its protocols, its strings, the copy of
its member's metadata -- is about 500 bytes, of which a RequestHandled row reads six values.
``RequestFacts`` keeps just those six. The row maker (``observe.request_row_maker``) reads them
as it reads any request that is not a declared message -- the identity by name, the timeouts by
``getattr`` -- and finds no partitions in it (``__kafka_struct_arrays__`` is empty), so facts are
kept only for a request class whose arrays name no partitions: the row is then the very one the
request itself would give.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ..bounded import shared_number
from ..protocol.headers import encode_response
from ..protocol.schema import Array, fields_of
from .clock import perf_now
from .handlers import HANDLERS
from .event_rows import REQUEST_ROWS, request_row_maker

if TYPE_CHECKING:
    from .connection import Connection
    from .state import Broker, Pending

_NO_MAKERS: dict = {}  # (REQUEST_ROWS for a request class not seen yet)

_NAMES = ("group_id", "member_id", "group_instance_id", "generation_id", "session_timeout_ms",
          "rebalance_timeout_ms")
# fields a row reads in other ways (observe._identity_by_name) or that name partitions
# (observe._walk_request): a request with any of them is kept whole
_OTHER = frozenset({"key_type", "key", "generation_id_or_member_epoch", "partition_index",
                    "partition", "partitions", "topic_id"})
_KEEPS_FACTS: dict[type, bool] = {}


class RequestFacts:
    __slots__ = _NAMES
    __kafka_struct_arrays__ = ()  # observe._struct_arrays: nothing to walk, no partitions

    def __init__(self, request: Any) -> None:
        for name in _NAMES:
            setattr(self, name, getattr(request, name, None))
        # the same few values come from every member: the coordinator's own int objects
        self.session_timeout_ms = shared_number(self.session_timeout_ms)
        self.rebalance_timeout_ms = shared_number(self.rebalance_timeout_ms)


def parked_request(request: Any) -> Any:
    """What a parked request keeps for its RequestHandled row: ``RequestFacts``, or the request
    itself where a row reads more of it."""
    cls = type(request)
    keeps = _KEEPS_FACTS.get(cls)
    if keeps is None:
        keeps = _KEEPS_FACTS[cls] = _names_no_partitions(cls)
    return RequestFacts(request) if keeps else request


def _names_no_partitions(cls: type) -> bool:
    """True if no instance of declared message ``cls`` (nor of the structs in its arrays) has a
    field a row reads other than the six facts."""
    if not attrs.has(cls):
        return False
    for field in fields_of(cls):
        if field.name in _OTHER:
            return False
        kind = field.type
        if isinstance(kind, Array) and isinstance(kind.element, type):
            if not _names_no_partitions(kind.element):
                return False
    return True


def answer_parked(broker: "Broker", conn: "Connection", parked: "Pending") -> bytearray:
    """The end of ``dispatch.handle_frame`` for a request answered after it was parked:
    RequestHandled (a sink may have subscribed meanwhile) and the response frame. Kept apart from
    handle_frame, whose every request would otherwise pay a call."""
    request, version = parked.request, parked.version
    response = parked.rendered()
    api_key, correlation_id, started = parked.api_key, parked.correlation_id, parked.started
    api = HANDLERS[api_key].api
    observation = broker.observation
    emit = observation.emit
    if emit is not None:
        observation.mark = done = perf_now()  # (the next request of the batch starts here)
        make = (REQUEST_ROWS.get(type(request), _NO_MAKERS).get(type(response))
                or request_row_maker(type(request), type(response)))
        info = conn.info
        emit(make(request, response, (done - started) * 1000 if started is not None else 0.0,
                  broker.topics, broker.clock.ms_at(done), conn.id, conn.peer,
                  api.name, api_key, version, correlation_id, parked.client_id,
                  info.client_software_name, info.client_software_version))
    return encode_response(api, version, correlation_id, response)
