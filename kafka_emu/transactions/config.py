"""The transaction coordinator's settings, with Kafka 4.2's defaults and config names.

``transaction_version`` is the cluster's finalized ``transaction.version`` feature (Kafka's
TransactionVersion: 0, 1 flexible log records, 2 the epoch bump of KIP-890 part 2). A cluster
formatted by Kafka 4.x gets TV_2 (its LATEST_PRODUCTION, bootstrap metadata version 4.0-IV2, no
dependencies); kafka-emu has no feature tool, so the level is the start-up setting
``emu.transaction.version``. What a client's request does follows the request's version, as in
Kafka; the level decides only the ends the coordinator starts itself (a timeout, a fencing
InitProducerId, an operator's abort) and what ApiVersions advertises.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class TransactionConfig:
    # transaction.max.timeout.ms: InitProducerId asking more gets INVALID_TRANSACTION_TIMEOUT
    max_timeout_ms: int = 900_000
    # transaction.abort.timed.out.transaction.cleanup.interval.ms: how often timeouts are found
    abort_check_interval_ms: int = 10_000
    # transactional.id.expiration.ms: an idle id (no transaction) is forgotten after this
    id_expiration_ms: int = 604_800_000
    # transaction.remove.expired.transaction.cleanup.interval.ms
    expire_check_interval_ms: int = 3_600_000
    # transaction.state.log.num.partitions: where hash(transactional id) routes in a cluster
    state_log_num_partitions: int = 50
    # the finalized transaction.version feature (emu.transaction.version): 0-2, Kafka 4.x's 2
    transaction_version: int = 2

    @classmethod
    def from_broker(cls, config) -> "TransactionConfig":
        """Read the broker config's transaction settings where it has them (names as above
        with dots as underscores, ``transaction_`` prefixed); defaults otherwise."""
        names = {"max_timeout_ms": "transaction_max_timeout_ms",
                 "abort_check_interval_ms":
                     "transaction_abort_timed_out_transaction_cleanup_interval_ms",
                 "id_expiration_ms": "transactional_id_expiration_ms",
                 "expire_check_interval_ms":
                     "transaction_remove_expired_transaction_cleanup_interval_ms",
                 "state_log_num_partitions": "transaction_state_log_num_partitions",
                 "transaction_version": "transaction_version"}
        found = {ours: getattr(config, theirs) for ours, theirs in names.items()
                 if getattr(config, theirs, None) is not None}
        return cls(**found)
