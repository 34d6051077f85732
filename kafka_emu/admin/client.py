"""AdminClient: cluster-level admin operations over :class:`BrokerConnection` s.

Group listing asks every broker of the cluster (from Metadata; a group lives on its coordinator,
as Kafka's admin client assumes), with KIP-518 state filtering at the broker on ListGroups v4+
and from DescribeGroups on older brokers. Group description finds each group's coordinator
(FindCoordinator v0-6: a key before v4, a batch of keys from v4, KIP-699) and asks it. Coordinator
errors a fresh or moving cluster produces are retried until the timeout. Version choice is the
connection's: nothing here keeps a table of versions, only version-specific body fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ErrorCode
from ..protocol.messages.describe_groups import DescribeGroupsRequest
from ..protocol.messages.find_coordinator import FindCoordinatorRequest
from ..protocol.messages.list_groups import ListGroupsRequest
from ..protocol.messages.metadata import MetadataRequest
from ..protocol.schema import Api
from ..protocol.versions import Versions
from .connection import (DEFAULT_CLIENT_ID, DEFAULT_TIMEOUT, AdminError, BrokerConnection,
                         BrokerError, UnsupportedApiError, parse_bootstrap)
from .model import (GroupDescription, GroupListing, MemberDescription, canonical_state,
                    decode_member_assignment, filter_states)

__all__ = ["AdminClient", "AdminError", "BrokerConnection", "BrokerError", "DEFAULT_TIMEOUT",
           "UnsupportedApiError", "parse_bootstrap"]

# Coordinator errors worth retrying until the deadline (a fresh Kafka may still be loading).
_RETRIABLE = {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
              ErrorCode.NOT_COORDINATOR}


class AdminClient:
    """Admin operations against a cluster reached through ``bootstrap`` (``HOST:PORT,...``)."""

    def __init__(self, bootstrap: str, *, timeout: float = DEFAULT_TIMEOUT,
                 client_id: str = DEFAULT_CLIENT_ID) -> None:
        try:
            servers = parse_bootstrap(bootstrap)
        except ValueError as exc:
            raise AdminError(f"bad bootstrap server: {exc}") from None
        self.timeout, self.client_id = timeout, client_id
        self._connections: dict[tuple[str, int], BrokerConnection] = {}
        failure: AdminError | None = None
        for host, port in servers:  # the first that answers is the bootstrap connection
            try:
                self.bootstrap = self._connect(host, port)
                break
            except AdminError as exc:
                failure = exc
        else:
            assert failure is not None
            raise failure

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()

    def __enter__(self) -> "AdminClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _connect(self, host: str, port: int) -> BrokerConnection:
        conn = self._connections.get((host, port))
        if conn is None:
            conn = BrokerConnection(host, port, timeout=self.timeout, client_id=self.client_id)
            self._connections[(host, port)] = conn
        return conn

    # -- generic ----------------------------------------------------------------------------
    def api_versions(self) -> dict[int, Versions]:
        """The bootstrap broker's advertised ranges, by API key."""
        return dict(self.bootstrap.broker_versions)

    def request(self, api: str | int | Api, build: Callable[[int], Any] | Any) -> tuple[int, Any]:
        """(version, response) of one request to the bootstrap broker at the best version."""
        return self.bootstrap.request(api, build)

    def brokers(self) -> list[BrokerConnection]:
        """A connection to every broker of the cluster (the bootstrap one alone if it is the
        only broker, or if Metadata is not available)."""
        if not self.bootstrap.supports("Metadata"):
            return [self.bootstrap]
        _, meta = self.bootstrap.request("Metadata", MetadataRequest(topics=[]))
        if len(meta.brokers) <= 1:
            return [self.bootstrap]
        return [self._connect(b.host, b.port) for b in sorted(meta.brokers,
                                                              key=lambda b: b.node_id)]

    # -- groups -----------------------------------------------------------------------------
    def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """Every group of the cluster, sorted by id. ``states=None``: ids only (states when the
        broker volunteers them); ``states=()``: every group with its state; otherwise only
        groups in those states (any case). ListGroups v4+ filters at the broker (KIP-518);
        older brokers are asked DescribeGroups and filtered here."""
        wanted = None if states is None else tuple(canonical_state(s) for s in states)
        found: dict[str, GroupListing] = {}
        for conn in self.brokers():
            for listing in self._list_groups_at(conn, wanted):
                found.setdefault(listing.group_id, listing)
        return sorted(found.values(), key=lambda g: g.group_id)

    def _list_groups_at(self, conn: BrokerConnection, wanted: tuple[str, ...] | None):
        def build(version: int) -> ListGroupsRequest:
            return ListGroupsRequest(states_filter=list(wanted or ()) if version >= 4 else [])

        version, response = conn.request("ListGroups", build)
        if response.error_code != ErrorCode.NONE:
            raise BrokerError(response.error_code, f"ListGroups at {conn.address}")
        with_state = version >= 4
        listings = [GroupListing(group_id=g.group_id, protocol_type=g.protocol_type,
                                 state=g.group_state if with_state else None)
                    for g in response.groups]
        if wanted is None or with_state or not listings:
            return listings
        # Pre-KIP-518 broker: a group's coordinator is the broker that listed it.
        described = {d.group_id: d for d in self._describe_at(conn, [g.group_id for g in listings])}
        listings = [GroupListing(group_id=g.group_id, protocol_type=g.protocol_type,
                                 state=described[g.group_id].state if g.group_id in described
                                 else "Unknown") for g in listings]
        return filter_states(listings, wanted)

    def find_coordinator(self, group_id: str) -> tuple[int, str, int]:
        """(node id, host, port) of the group's coordinator, retrying while it is loading."""
        def build(version: int) -> FindCoordinatorRequest:
            if version >= 4:  # KIP-699 batches keys
                return FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id])
            return FindCoordinatorRequest(key=group_id, key_type=0)

        def attempt():
            version, r = self.bootstrap.request("FindCoordinator", build)
            if version >= 4:
                match = [c for c in r.coordinators if c.key == group_id] or r.coordinators
                if not match:
                    raise AdminError(f"FindCoordinator v{version}: no coordinator in response")
                r = match[0]
            if r.error_code != ErrorCode.NONE:
                raise BrokerError(r.error_code, f"FindCoordinator for group {group_id!r}",
                                  r.error_message)
            return r.node_id, r.host, r.port

        return self._retrying(attempt)

    def describe_groups(self, group_ids: Iterable[str]) -> list[GroupDescription]:
        """One description per group id, in the order given, each from its coordinator."""
        group_ids = list(dict.fromkeys(group_ids))

        def attempt() -> dict[str, GroupDescription]:
            by_coordinator: dict[tuple[str, int], list[str]] = {}
            for group_id in group_ids:
                _, host, port = self.find_coordinator(group_id)
                by_coordinator.setdefault((host, port), []).append(group_id)
            return {d.group_id: d for (host, port), ids in by_coordinator.items()
                    for d in self._describe_at(self._coordinator(host, port), ids)}

        found = self._retrying(attempt)  # NOT_COORDINATOR: the group moved, find it again
        return [found[g] for g in group_ids if g in found]

    def _coordinator(self, host: str, port: int) -> BrokerConnection:
        boot = self.bootstrap
        if (host, port) == (boot.host, boot.port):
            return boot
        return self._connect(host, port)

    def _describe_at(self, conn: BrokerConnection, group_ids: list[str]) -> list[GroupDescription]:
        _, response = conn.request("DescribeGroups", DescribeGroupsRequest(groups=group_ids))
        out = []
        for g in response.groups:
            if g.error_code in _RETRIABLE:
                raise BrokerError(g.error_code, f"DescribeGroups for group {g.group_id!r}",
                                  g.error_message)
            members = tuple(
                MemberDescription(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                  client_id=m.client_id, client_host=m.client_host,
                                  assignment=decode_member_assignment(g.protocol_type,
                                                                      m.member_assignment),
                                  raw_assignment=m.member_assignment)
                for m in g.members)
            out.append(GroupDescription(group_id=g.group_id, state=g.group_state,
                                        protocol_type=g.protocol_type, protocol=g.protocol_data,
                                        members=members, error_code=g.error_code,
                                        error_message=g.error_message))
        return out

    def _retrying(self, attempt: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.timeout
        delay = 0.05
        while True:
            try:
                return attempt()
            except BrokerError as exc:
                if exc.code not in _RETRIABLE or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
