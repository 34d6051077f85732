"""The transaction coordinator (KIP-98, KIP-447, KIP-890): pure, timed by now_ms, commands in and
outputs out (STYLE.md, third wave). Markers reach the partition logs through the broker, as Kafka
writes them; TxnOffsetCommit stays a group request in the group coordinator.

- ``metadata.py``: one transactional id's state, Kafka's states and allowed-previous table;
- ``coordinator.py``: the requests (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
  verification), timeouts and id expiration, ListTransactions' filters;
- ``results.py``: what the requests answer, and ``WriteMarkers`` (the broker carries them out in
  broker/txn_markers.py, then calls ``markers_written``);
- ``config.py``: the settings, with Kafka's defaults.
"""

from .config import TransactionConfig
from .coordinator import EndResult, InitResult, TransactionCoordinator, WriteMarkers
from .metadata import TransactionMetadata, TxnState

__all__ = ["EndResult", "InitResult", "TransactionConfig", "TransactionCoordinator",
           "TransactionMetadata", "TxnState", "WriteMarkers"]
