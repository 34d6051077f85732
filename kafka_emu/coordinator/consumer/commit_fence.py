"""Which commits a consumer group accepts: Kafka 4.3's ConsumerGroup.validateOffsetCommit with its
per-partition check (KIP-1251, assignment epochs), for OffsetCommit and TxnOffsetCommit alike.

Theory of operation
-------------------
A member of a consumer group learns of a new member epoch only from its next heartbeat answer, so
a commit it sends meanwhile carries the epoch before. Up to Kafka 4.2 such a lagging commit was
refused outright (STALE_MEMBER_EPOCH), although the partitions it commits are still the member's.
Kafka 4.3 remembers, per partition a member holds, the member epoch it was assigned at
(``ConsumerMember.assignment_epochs``, kept through reconciliation and pending revocation) and
decides, in this order:

1. a negative epoch while the group has no members commits (admin tools, assign() consumers);
2. a TxnOffsetCommit with no member id, no instance id and epoch -1 commits (a producer that
   sent no consumer group metadata);
3. otherwise the member must exist (UNKNOWN_MEMBER_ID);
4. an OffsetCommit below v9 from a consumer-protocol member is UNSUPPORTED_VERSION;
5. the member's own epoch commits every partition;
6. a newer epoch is refused;
7. an older epoch commits only partitions the member holds (assigned or pending revocation) and
   that were assigned at that epoch or before; the first other partition refuses the whole commit
   (Kafka's validator throws from inside the loop, and the error response covers every partition).

A refusal is STALE_MEMBER_EPOCH for a consumer-protocol member and ILLEGAL_GENERATION for a
classic member inside the group (as its strict check was); TxnOffsetCommit answers
ILLEGAL_GENERATION for both (Kafka maps StaleMemberEpochException there). Only partitions whose
metadata fits are checked: an oversized one is OFFSET_METADATA_TOO_LARGE before the validator runs.
OffsetFetch is unchanged (its member epoch must be the current one, shared.py).
"""

from __future__ import annotations

from typing import Iterable

from kafka_emu.errors import ErrorCode

from .model import ConsumerGroup, ConsumerMember

UNKNOWN_GENERATION = -1


def validate_commit(group: ConsumerGroup, *, member_id: str, instance_id: str | None,
                    epoch: int, partitions: Iterable[tuple[str, int]],
                    transactional: bool = False, supports_member_epochs: bool = True
                    ) -> ErrorCode | None:
    """None if the commit may write ``partitions``, else the error for the whole commit."""
    if epoch < 0 and not group.members:
        return None
    if (transactional and epoch == UNKNOWN_GENERATION and member_id == ""
            and instance_id is None):
        return None
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    classic = member.classic is not None
    if not transactional and not classic and not supports_member_epochs:
        return ErrorCode.UNSUPPORTED_VERSION
    if classic or transactional:
        refused = ErrorCode.ILLEGAL_GENERATION
    else:
        refused = ErrorCode.STALE_MEMBER_EPOCH
    if epoch == member.member_epoch:
        return None
    if epoch > member.member_epoch:
        return refused
    return None if lagging_commit_allowed(member, epoch, partitions) else refused


def lagging_commit_allowed(member: ConsumerMember, epoch: int,
                           partitions: Iterable[tuple[str, int]]) -> bool:
    """Kafka's createAssignmentEpochValidator: every partition held and assigned by ``epoch``."""
    epochs = member.assignment_epochs
    for key in partitions:
        assigned_at = epochs.get(key)
        if assigned_at is None or epoch < assigned_at:
            return False
    return True
