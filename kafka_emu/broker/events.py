"""Structured events the server emits, beside the coordinator's own events.

Both kinds reach the same sinks through the one observer seam (``broker/observe.py``): the
timeline, the trace writer and the log lines all read these. Nothing is built while nobody
listens: the server checks ``broker.observation.emit`` before building any event.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class ConnectionOpened:
    """A client connected to a listener (``local``: the listener's address)."""

    at_ms: int
    connection_id: int
    peer: str
    local: str


@attrs.frozen(kw_only=True)
class ConnectionClosed:
    """A connection ended; ``reason`` says how: "closed by peer", or why the broker closed it
    (idle too long, a frame it could not parse, a connection limit, a fault rule, ...)."""

    at_ms: int
    connection_id: int
    peer: str
    reason: str


@attrs.frozen(kw_only=True)
class RequestHandled:
    """One request answered (or, for acks=0 Produce, applied without an answer)."""

    at_ms: int
    connection_id: int
    peer: str
    api: str
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    client_software_name: str | None  # from ApiVersions v3+ on this connection (KIP-511)
    client_software_version: str | None
    group_id: str | None  # as the request names them, where it does
    member_id: str | None
    group_instance_id: str | None
    generation_id: int | None
    latency_ms: float
    error_code: int | None  # the response's top-level error code, where it has one
    partition_errors: tuple[tuple[str, int, int], ...] = ()  # non-zero (topic, partition, code)
    throttle_time_ms: int = 0
    # The (topic, partition) pairs the request names (Fetch v13+ topic ids resolved to names),
    # so a reader can tell who fetched or committed what; JoinGroup's timeouts, so a reader can
    # judge heartbeat pacing and rejoin delays.
    partitions: tuple[tuple[str, int], ...] = ()
    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None


@attrs.frozen(kw_only=True)
class FaultFired:
    """A control-plane fault rule matched a request and acted on it (control/faults.py)."""

    at_ms: int
    rule_id: int
    action: str  # "error", "delay", "close_before", "close_after", "blackhole", "throttle"
    connection_id: int
    peer: str
    api: str
    version: int
    correlation_id: int
    client_id: str | None
    group_id: str | None = None
    member_id: str | None = None
    error_code: int | None = None  # for action "error"
    delay_ms: int | None = None  # for "delay" and "throttle"


@attrs.frozen(kw_only=True)
class AuthorizationDenied:
    """An ACL denied a principal an operation (security/authorize.py): the whole request, or
    one topic, group or resource of it (answered with ``error_code``, the rest served)."""

    at_ms: int
    peer: str
    client_id: str | None
    principal: str  # "User:alice", "User:ANONYMOUS"
    api: str
    operation: str  # Kafka's AclOperation name: READ, WRITE, DESCRIBE, ...
    resource_type: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
    resource_name: str | None  # None: any resource of the type (authorizeByResourceType)
    error_code: int


@attrs.frozen(kw_only=True)
class TimeAdvanced:
    """The control plane moved the coordinator's clock (control: advance, manual clock)."""

    at_ms: int  # the coordinator's time after the move
    by_ms: int


@attrs.frozen(kw_only=True)
class ShareRecordsChanged:
    """Share-group delivery (KIP-932): a run of one share-partition's records was acquired
    (``acquire``, delivery count after it), acknowledged (``acknowledge``, with ``ack_type``:
    0 gap, 1 accept, 2 release, 3 reject), released (``release``: a release acknowledgement,
    the holder leaving or closing its session), had its acquisition lock run out
    (``lock_expired``) or was archived (``archive``: rejected, or released at the delivery
    count limit -- a poison record)."""

    at_ms: int
    group_id: str
    topic: str | None  # None: the topic was deleted
    partition: int
    action: str  # acquire, acknowledge, release, lock_expired, archive
    member_id: str | None
    first_offset: int
    last_offset: int
    delivery_count: int
    ack_type: int | None = None


@attrs.frozen(kw_only=True)
class TransactionBegun:
    """A transaction started: the first AddPartitionsToTxn / AddOffsetsToTxn (or Produce v12's
    implicit add, KIP-890) of a transactional id with no transaction open moved it to Ongoing;
    its timeout runs from here. ``partitions`` and ``groups`` are what that first request added
    (an AddOffsetsToTxn adds the group's __consumer_offsets partition). Ends with
    TransactionEnded."""

    at_ms: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    partitions: tuple[tuple[str, int], ...]
    groups: tuple[str, ...]


@attrs.frozen(kw_only=True)
class TransactionEnded:
    """The transaction coordinator completed a transaction: its COMMIT/ABORT markers written to
    every partition and its groups' pending offsets completed (broker/txn_markers.py).
    ``cause`` says who ended it: ``client`` (EndTxn), ``timeout`` (transaction.timeout.ms, or
    the control plane's expire_transaction), ``fenced`` (a new InitProducerId for the id while
    it was open) or ``operator`` (abort_transaction); every cause but ``client`` fenced the
    producer (its epoch is ``producer_epoch``, bumped)."""

    at_ms: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    cause: str
    partitions: tuple[tuple[str, int], ...]
    groups: tuple[str, ...]
    duration_ms: int  # from its first partition added to its end (-1: it had none)


@attrs.frozen(kw_only=True)
class Authenticated:
    """A SASL login (or KIP-368 re-authentication) succeeded (security/sasl.py)."""

    at_ms: int
    connection_id: int
    peer: str
    listener: str
    mechanism: str
    principal: str  # "User:alice"
    reauthentication: bool
    session_lifetime_ms: int  # 0: the session never expires


@attrs.frozen(kw_only=True)
class AuthenticationFailed:
    """A SASL login or a TLS handshake failed and the connection was closed (security/sasl.py,
    tls.py): the user the client named when the mechanism tells it (PLAIN, SCRAM), and the error
    of the failure (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE;
    -1 for a TLS handshake, which Kafka's protocol has no code for)."""

    at_ms: int
    connection_id: int
    peer: str
    listener: str
    mechanism: str | None
    user: str | None
    reauthentication: bool
    error_code: int
    reason: str
