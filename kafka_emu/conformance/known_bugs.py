"""Known client bugs: a scenario failure a client's own bug explains is labelled with that bug.

The verdict stays FAIL (the client does not conform) and its reason becomes ``known <client>
bug: <the bug, with its evidence> -- <what broke>``, which the pytest catalogues xfail, the
matrix report splits at `` -- `` and users grep for. One record, :class:`KnownBug`, and one
function, :func:`label`, serve every path: the consumer and share scenarios (``runner.py``),
the transactional copiers (``txn_scenarios.py``), a user's profile (``known_bugs`` in the
profile file, scenario -> bug text, read by :func:`from_profile`) and the matrix's columns
(:func:`of`, a bug kept to the releases its evidence came from).

A bug is labelled only where it is the explanation: its scenario, and, when a bug shows itself
in a particular way, only a failure that shows that way (a reason that starts so, an output that
carries the client's own words as it died), and, for a bug that stalls or kills a client, never
beside a lost or doubled record (that is a plain failure whatever the client).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs


@attrs.frozen(kw_only=True)
class KnownBug:
    bug: str  # what the bug is and the evidence for it, as the label says it
    # the scenario it fails, by name; with ``family``, a name prefix ("share_": every share
    # scenario) for a bug told by its evidence alone
    scenario: str
    family: bool = False
    reason_starts: str = ""  # evidence: only a failure whose reason starts so
    output_shows: str = ""  # evidence: only a failure whose output (the reason) carries this
    clean_only: bool = False  # never beside a violation (a lost or doubled record, ...)
    seen_on: str = ""  # the release its evidence came from, as a version prefix; "" any

    def explains(self, scenario: str, reason: str, violations: Sequence[object]) -> bool:
        if scenario != self.scenario and not (self.family and scenario.startswith(self.scenario)):
            return False
        if self.clean_only and violations:
            return False
        return reason.startswith(self.reason_starts) and self.output_shows in reason

    def seen_with(self, version: str | None) -> bool:
        """Whether the bug labels a run of library ``version`` (None: the version is not
        being told apart, as a single client's run does not)."""
        return version is None or version.startswith(self.seen_on)


def label(bugs: Iterable[KnownBug], *, client: str, scenario: str, reason: str,
          violations: Sequence[object] = ()) -> str | None:
    """``reason`` (a failed ``scenario``'s) labelled with the first of ``bugs`` that explains
    it, or None when none does."""
    for known in bugs:
        if known.explains(scenario, reason, violations):
            return f"known {client} bug: {known.bug} -- {reason}"
    return None


def from_profile(table: Mapping[str, str]) -> tuple[KnownBug, ...]:
    """A profile's ``known_bugs`` (scenario -> the bug, with its evidence): each labels every
    failure of its scenario."""
    return tuple(KnownBug(scenario=name, bug=text) for name, text in table.items())


def of(client: str, version: str | None = None) -> tuple[KnownBug, ...]:
    """The known bugs of built-in client ``client`` (the kit's programs for that library: its
    consumer, share consumer and copier), those seen with ``version`` when one is given."""
    return tuple(b for b in BUILT_IN.get(client, ()) if b.seen_with(version))


# -- the kit's own clients' libraries, each found by the kit with the evidence (read in the
# library's source and the run's logs) ---------------------------------------------------------

_AIOKAFKA_STATIC = (
    "aiokafka 0.14 sends OffsetCommit v2/v3, which has no group.instance.id, and has no error "
    "class for FENCED_INSTANCE_ID (82, read as UnknownError): a replaced static member is told "
    "UNKNOWN_MEMBER_ID on commit, rejoins as a new member with the same instance id and takes it "
    "back, so for a moment both processes own the partition (overlapping-assignment)")
_AIOKAFKA_OFFSET_FETCH = (
    "aiokafka 0.14 sends OffsetFetch v3 but reads only the per-partition error codes; Kafka "
    "answers a coordinator still loading with the top-level COORDINATOR_LOAD_IN_PROGRESS and no "
    "partitions (OffsetFetchRequest.getErrorResponse, v2+), which aiokafka takes for 'nothing "
    "committed': it resets to auto.offset.reset and delivers committed records again "
    "(consumed-behind-commit)")
_KAFKAJS_COORDINATOR = (
    "kafkajs 2.2.4 keeps sending the group's commits and heartbeats to the stopped coordinator "
    "('Broker 1 not found in the cached metadata', ECONNREFUSED; the same error as the open "
    "tulios/kafkajs#802) until its retries run out, then crashes and restarts the consumer as "
    "a new member: a rebalance Kafka's test forbids, and the records whose commits failed are "
    "delivered again")

# The transactional copiers' bugs both stall a copier: only a stall (the kit timed out waiting,
# txn_harness's wait) is labelled with them; a lost, duplicated or unexpected record is a plain
# failure whatever the client.
_STALL = "timed out waiting for"
_KAFKA_PYTHON_TXN_RETRY = (
    "kafka-python 3.0.12 drops a transactional request when the connection to the transaction "
    "coordinator fails while it is being sent: Sender._maybe_send_transactional_request catches "
    "the error of await_ready (a stopped broker refuses the connection), looks the coordinator "
    "up again, but skips TransactionManager.retry because target_node is already set (Java's "
    "Sender.maybeFindCoordinatorAndRetry always re-enqueues). A lost AddPartitionsToTxn leaves "
    "its partition pending forever (the sender loops 'Nodes with data ready to send' / 'Created "
    "0 produce requests' and commit_transaction never returns); a lost AddOffsetsToTxn leaves "
    "send_offsets_to_transaction waiting forever, silently. Either way the copier stalls after a "
    "broker bounce, while FindCoordinator answers the live new coordinator, as Kafka "
    "(tests/integration/test_txn_coordinator_after_bounce.py)")
_LIBRDKAFKA_COORD_DECOMMISSIONED = (
    "librdkafka 2.16 (confluent-kafka 2.16.1) can hang in send_offsets_to_transaction when the "
    "group coordinator's broker is decommissioned (dropped from Metadata, as Kafka drops a "
    "stopped broker): rd_kafka_coord_req_fsm finds the stale cached coordinator, asks its "
    "terminated broker thread for a connection and waits for a state change that never comes, "
    "so no FindCoordinator / TxnOffsetCommit is sent until the 60 s API timeout "
    "(confluentinc/librdkafka#5511, fix proposed in #5512; seen with debug=eos,broker: "
    "AddOffsetsToTxn answered, then nothing for the group). Intermittent: about one broker "
    "bounce run in three under load")
_TXN_BROKER_BOUNCES = ("txn_clean_bounce_brokers", "txn_clean_bounce_brokers_ordered",
                       "txn_hard_bounce_brokers", "txn_hard_bounce_brokers_ordered")

# Told by what the share consumer printed as it died, in any share scenario.
_LIBRDKAFKA_SHARE_ABORT_EVIDENCE = (
    "rd_kafka_broker_destroy_final: Assertion `!rkb->rkb_share_fetch_session.toppars_to_add'")
_LIBRDKAFKA_SHARE_ABORT = (
    "librdkafka 2.16 (confluent-kafka 2.16) can abort a share consumer when a broker it "
    "share-fetched from is bounced: the transport failure resets the broker's ShareFetch "
    "session, which moves the partitions in it to its to-add list, and when the broker is "
    "then decommissioned (dropped from Metadata, as Kafka drops a stopped broker) "
    "rd_kafka_broker_destroy_final asserts that list is empty -- SIGABRT (exit code -6), "
    "seen once in a CI run of share_broker_rolling_bounce after 'ShareFetch reply error: "
    "Local: Broker transport failure'")

# client -> its bugs, in the order they are tried. The consumer-group bugs of aiokafka and
# kafkajs label only the release their evidence came from in a matrix run; the others any.
BUILT_IN: dict[str, tuple[KnownBug, ...]] = {
    "kafkajs": tuple(KnownBug(scenario=name, bug=_KAFKAJS_COORDINATOR, seen_on="2.2.4")
                     for name in ("broker_failure", "broker_rolling_bounce")),
    "aiokafka": (
        KnownBug(scenario="fencing_static_consumer_stable", bug=_AIOKAFKA_STATIC, seen_on="0.14"),
        KnownBug(scenario="fencing_static_consumer_all", bug=_AIOKAFKA_STATIC, seen_on="0.14"),
        KnownBug(scenario="fault_coordinator_load_in_progress_on_offset_fetch",
                 bug=_AIOKAFKA_OFFSET_FETCH, seen_on="0.14")),
    "kafka-python": tuple(KnownBug(scenario=name, bug=_KAFKA_PYTHON_TXN_RETRY,
                                   reason_starts=_STALL, clean_only=True)
                          for name in _TXN_BROKER_BOUNCES),
    "confluent-kafka": (
        *(KnownBug(scenario=name, bug=_LIBRDKAFKA_COORD_DECOMMISSIONED, reason_starts=_STALL,
                   clean_only=True) for name in _TXN_BROKER_BOUNCES),
        KnownBug(scenario="share_", family=True, bug=_LIBRDKAFKA_SHARE_ABORT,
                 output_shows=_LIBRDKAFKA_SHARE_ABORT_EVIDENCE, clean_only=True)),
}


def of_share_program(client: str) -> tuple[KnownBug, ...]:
    """The bugs of the kit's share consumer program that a client named ``client`` runs (the
    share scenarios pick it by the client's name, ``share_scenarios.SHARE_CLIENTS``, whatever
    its consumer program)."""
    return tuple(b for b in of(client) if b.scenario.startswith("share_"))


# librdkafka before 2.10 has KIP-848 as early access only: every consumer-protocol scenario's
# failure there is labelled with what was seen (``matrix.client_for``; the FAIL stays).
EARLY_KIP_848 = (
    "librdkafka {v} has the consumer protocol as early access only (it logs 'KIP-848 Consumer "
    "Group Protocol is in Early Access and MUST NOT be used in production'); seen with 2.6.1: "
    "its rebalance callback passes a member's whole new assignment to on_assign (owned "
    "[0, 1, 2], given [0, 1]) and never calls on_revoke, so the application is never told "
    "what it lost")

# Bugs of librdkafka's kafkatest_verifiable_client found by the kit (Debian's 2.0.2-1 build; the
# example is unchanged upstream since), each with its evidence from the run's logs: the built-in
# ``librdkafka`` profile's ``known_bugs``, in a profile's own format.
_RDKAFKA_LOST_COMMIT = (
    "its offset_commit_cb asserts offsets.size() > 0, but when a heartbeat is answered "
    "ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID (as Kafka does after a rebalance it missed) "
    "librdkafka marks the assignment lost, the program's rebalance callback commits before "
    "unassign(), and librdkafka reports that commit as ERR__ASSIGNMENT_LOST with no partitions: "
    "stderr 'Propagate offset for 0 partitions, error: Local: Group partition assignment lost', "
    "then the assertion aborts it (exit -6)")
_RDKAFKA_COORDINATOR_LOOP = (
    "librdkafka 2.0.2, after an OffsetCommit answered COORDINATOR_NOT_AVAILABLE, may lose its "
    "coordinator until the session expires (2 runs of 5 here): its FindCoordinator waits behind "
    "a 500 ms Fetch long-poll on the same connection (answered in order, as Kafka does), the "
    "commit retry queued meanwhile on the coordinator's connection then fails with 'Local: "
    "Broker transport failure' as that connection is re-pointed, and that marks the "
    "coordinator dead again (debug=cgrp,broker: 'marking the coordinator (1) dead: Local: "
    "Broker transport failure: OffsetCommitRequest failed' every 500 ms; every FindCoordinator "
    "and ApiVersions answered without error); the expired member's lost-assignment commit then "
    "aborts the program as in fault_illegal_generation_on_heartbeat. When FindCoordinator "
    "returns before the 100 ms retry it passes; librdkafka 2.16 (confluent-kafka) passes")
LIBRDKAFKA_VERIFIABLE_CLIENT: dict[str, str] = {
    "fault_illegal_generation_on_heartbeat": _RDKAFKA_LOST_COMMIT,
    "fault_unknown_member_id_on_heartbeat": _RDKAFKA_LOST_COMMIT,
    "fault_coordinator_not_available_on_commit": _RDKAFKA_COORDINATOR_LOOP}
