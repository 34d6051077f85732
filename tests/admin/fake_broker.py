"""A tiny scripted broker for admin-client tests: real sockets, our codec, canned answers.

``FakeBroker`` listens on 127.0.0.1 port 0 in a thread, serves each connection in its own thread,
decodes every request with our codec and answers with ``handlers[api name](broker, version,
request)`` encoded with our codec. It advertises ``versions`` (default: our declarations) and
answers ApiVersions itself, the way Kafka does: a version it does not support gets a v0 body with
UNSUPPORTED_VERSION and its ApiVersions range. Everything it receives is kept in ``requests``;
anything a correct client would never cause (a version outside the advertised range, an API with
no handler) lands in ``errors`` and closes the connection, and ``stop()`` re-raises it.

``group_handlers(groups)`` scripts FindCoordinator, ListGroups, DescribeGroups, Metadata,
OffsetFetch (each group's ``committed``) and ListOffsets (``LOG_END`` everywhere) from a list of
``FakeGroup`` values, honouring ListGroups v4 StatesFilter exactly (case-sensitive).
"""

from __future__ import annotations

import uuid

import socket
import threading
from collections.abc import Callable
from typing import Any

import attrs

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import APIS, codec
from kafka_emu.protocol.framing import FrameBuffer
from kafka_emu.protocol.headers import (decode_request_header, encode_response, peek_api,
                                        request_header_version)
from kafka_emu.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from kafka_emu.protocol.messages.describe_groups import (DescribedGroup, DescribedGroupMember,
                                                         DescribeGroupsResponse)
from kafka_emu.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from kafka_emu.protocol.messages.list_groups import ListedGroup, ListGroupsResponse
from kafka_emu.protocol.messages.list_offsets import (ListOffsetsPartitionResponse,
                                                      ListOffsetsResponse, ListOffsetsTopicResponse)
from kafka_emu.protocol.messages.metadata import (MetadataResponse, MetadataResponseBroker,
                                                  MetadataResponseTopic)
from kafka_emu.protocol.messages.offset_fetch import (
    OffsetFetchResponse, OffsetFetchResponseGroup, OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions, OffsetFetchResponseTopic, OffsetFetchResponseTopics)
from kafka_emu.protocol.versions import Versions, versions as parse_versions

Handler = Callable[["FakeBroker", int, Any], Any]


@attrs.frozen(kw_only=True)
class Received:
    api: str
    version: int
    client_id: str | None
    body: Any


class FakeBroker:
    def __init__(self, versions: dict[str, str] | None = None,
                 handlers: dict[str, Handler] | None = None, *,
                 api_versions_error_keys: list[ApiVersion] | None = None,
                 node_id: int = 0) -> None:
        """``versions``: API name -> advertised range (e.g. {"ListGroups": "0-3"}) overriding
        our declarations; a range of "none" stops advertising that API. Names not declared by
        kafka-emu may be given as "key:NN". ``api_versions_error_keys``: what an
        UNSUPPORTED_VERSION ApiVersions answer carries (default: the ApiVersions range)."""
        self.advertised: dict[int, Versions] = {k: a.valid for k, a in APIS.items()}
        by_name = {a.name: k for k, a in APIS.items()}
        for name, text in (versions or {}).items():
            key = int(name[4:]) if name.startswith("key:") else by_name[name]
            rng = parse_versions(text)
            if rng.empty:
                self.advertised.pop(key, None)
            else:
                self.advertised[key] = rng
        self.handlers = dict(handlers or {})
        self.api_versions_error_keys = api_versions_error_keys
        self.node_id = node_id
        self.requests: list[Received] = []
        self.errors: list[BaseException] = []
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.host, self.port = self._listener.getsockname()[:2]
        self._stopping = threading.Event()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def api_names(self) -> list[str]:
        return [r.api for r in self.requests]

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> "FakeBroker":
        self._spawn(self._accept_loop)
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in list(self._threads):
            t.join(timeout=5)
        self._listener.close()
        if self.errors:
            raise AssertionError(f"fake broker saw {self.errors!r}") from self.errors[0]

    def __enter__(self) -> "FakeBroker":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(t)
        t.start()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            with self._lock:
                self._socks.append(sock)
                self.connections += 1
            self._spawn(self._serve, sock)

    def _serve(self, sock: socket.socket) -> None:
        frames = FrameBuffer()
        with sock:
            while True:
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                for frame in frames.feed(chunk):
                    try:
                        reply = self._answer(frame)
                    except Exception as exc:  # noqa: BLE001 -- reported by stop()
                        self.errors.append(exc)
                        return
                    sock.sendall(reply)

    # -- protocol ---------------------------------------------------------------------------
    def _answer(self, frame: bytes) -> bytes:
        key, version, correlation_id = peek_api(frame)
        api = APIS[key]
        header, r = decode_request_header(frame, request_header_version(api, version))
        body = codec.read_from(api.request, version, r)
        self.requests.append(Received(api=api.name, version=version,
                                      client_id=header.client_id, body=body))
        if api.name == "ApiVersions":
            return self._api_versions(api, version, correlation_id)
        if version not in self.advertised.get(key, Versions(1, 0)):
            raise AssertionError(f"client sent {api.name} v{version}, advertised "
                                 f"{self.advertised.get(key)}")
        handler = self.handlers.get(api.name)
        if handler is None:
            raise AssertionError(f"no handler for {api.name}")
        return encode_response(api, version, correlation_id, handler(self, version, body))

    def _api_versions(self, api, version: int, correlation_id: int) -> bytes:
        mine = self.advertised[api.key]
        if version not in mine:
            keys = self.api_versions_error_keys
            if keys is None:
                keys = [ApiVersion(api_key=api.key, min_version=mine.lo, max_version=mine.hi)]
            response = ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION,
                                           api_keys=keys)
            return encode_response(api, 0, correlation_id, response)
        keys = [ApiVersion(api_key=k, min_version=v.lo, max_version=v.hi)
                for k, v in sorted(self.advertised.items())]
        return encode_response(api, version, correlation_id,
                               ApiVersionsResponse(error_code=0, api_keys=keys))


# -- scripted groups ----------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class FakeMember:
    member_id: str
    client_id: str = "client"
    client_host: str = "/127.0.0.1"
    group_instance_id: str | None = None
    assignment: bytes = b""


@attrs.frozen(kw_only=True)
class FakeGroup:
    group_id: str
    state: str = "Stable"
    protocol_type: str = "consumer"
    protocol: str = "range"
    members: tuple[FakeMember, ...] = ()
    committed: tuple[tuple[str, int, int], ...] = ()  # (topic, partition, offset)


LOG_END = 100  # the log-end offset the fake reports for every partition


def group_handlers(groups: list[FakeGroup], *, coordinator: FakeBroker | None = None
                   ) -> dict[str, Handler]:
    """Handlers answering from ``groups``; FindCoordinator names ``coordinator`` (default: the
    broker asked)."""
    by_id = {g.group_id: g for g in groups}

    def find_coordinator(broker: FakeBroker, version: int, req):
        target = coordinator or broker
        if version >= 4:
            return FindCoordinatorResponse(coordinators=[
                Coordinator(key=k, node_id=target.node_id, host=target.host, port=target.port,
                            error_code=0) for k in req.coordinator_keys])
        return FindCoordinatorResponse(error_code=0, node_id=target.node_id, host=target.host,
                                       port=target.port)

    def list_groups(broker: FakeBroker, version: int, req):
        listed = [g for g in groups if not req.states_filter or g.state in req.states_filter]
        return ListGroupsResponse(error_code=0, groups=[
            ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type,
                        group_state=g.state if version >= 4 else "") for g in listed])

    def describe_groups(broker: FakeBroker, version: int, req):
        out = []
        for group_id in req.groups:
            g = by_id.get(group_id)
            if g is None:
                code = ErrorCode.GROUP_ID_NOT_FOUND if version >= 6 else 0
                out.append(DescribedGroup(error_code=code, group_id=group_id, group_state="Dead",
                                          protocol_type="", protocol_data=""))
                continue
            members = [DescribedGroupMember(
                member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
                group_instance_id=m.group_instance_id if version >= 4 else None,
                member_assignment=m.assignment) for m in g.members]
            out.append(DescribedGroup(error_code=0, group_id=g.group_id, group_state=g.state,
                                      protocol_type=g.protocol_type, protocol_data=g.protocol,
                                      members=members))
        return DescribeGroupsResponse(groups=out)

    def topic_id(name: str) -> uuid.UUID:  # stable per name: OffsetFetch v10 names topics by id
        return uuid.uuid5(uuid.NAMESPACE_DNS, name)

    def metadata(broker: FakeBroker, version: int, req):
        named = sorted({t for g in groups for t, _, _ in g.committed})
        return MetadataResponse(brokers=[MetadataResponseBroker(
            node_id=broker.node_id, host=broker.host, port=broker.port)],
            topics=[MetadataResponseTopic(error_code=0, name=t, topic_id=topic_id(t))
                    for t in named] if req.topics is None else [])

    def offset_fetch(broker: FakeBroker, version: int, req):
        def topics(group_id, topic_cls, partition_cls):
            by_topic: dict[str, list] = {}
            g = by_id.get(group_id)
            for topic, p, offset in (g.committed if g else ()):
                by_topic.setdefault(topic, []).append(partition_cls(
                    partition_index=p, committed_offset=offset, metadata="", error_code=0))
            return [topic_cls(name=t, topic_id=topic_id(t), partitions=ps)
                    if topic_cls is OffsetFetchResponseTopics else topic_cls(name=t, partitions=ps)
                    for t, ps in by_topic.items()]

        if version >= 8:
            return OffsetFetchResponse(groups=[OffsetFetchResponseGroup(
                group_id=g.group_id, error_code=0, topics=topics(
                    g.group_id, OffsetFetchResponseTopics, OffsetFetchResponsePartitions))
                for g in req.groups])
        return OffsetFetchResponse(error_code=0, topics=topics(
            req.group_id, OffsetFetchResponseTopic, OffsetFetchResponsePartition))

    def list_offsets(broker: FakeBroker, version: int, req):
        return ListOffsetsResponse(topics=[ListOffsetsTopicResponse(name=t.name, partitions=[
            ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0,
                                         offset=LOG_END) for p in t.partitions])
            for t in req.topics])

    return {"FindCoordinator": find_coordinator, "ListGroups": list_groups,
            "DescribeGroups": describe_groups, "Metadata": metadata,
            "OffsetFetch": offset_fetch, "ListOffsets": list_offsets}
