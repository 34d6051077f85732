"""What the transaction coordinator answers: results of its requests, and the markers the broker
writes to complete a transaction."""

from __future__ import annotations

import attrs

from ..errors import ErrorCode
from .metadata import NO_PRODUCER_EPOCH, NO_PRODUCER_ID


@attrs.frozen(kw_only=True)
class WriteMarkers:
    """Complete a transaction: a marker on each partition, then ``markers_written``."""
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    partitions: tuple[tuple[str, int], ...]
    groups: tuple[str, ...]
    coordinator_epoch: int = 0
    cause: str = "client"  # client, timeout, fenced (InitProducerId), operator
    transaction_version: int = 1  # 2: markers carry the epoch EndTxn v5 bumped (KIP-890)


@attrs.frozen(kw_only=True)
class InitResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    markers: WriteMarkers | None = None


@attrs.frozen(kw_only=True)
class EndResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    markers: WriteMarkers | None = None
