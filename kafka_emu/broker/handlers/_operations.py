"""Authorized-operations bitfields (KIP-430), as Kafka reports them without an authorizer.

Kafka sets bit ``code`` for every ACL operation (``AclOperation`` codes) that applies to the
resource type (``AclEntry.supportedOperations``) and, with no authorizer configured, reports all of
them allowed. Kafka 4.0 added DESCRIBE_CONFIGS and ALTER_CONFIGS to groups (group configs,
KIP-848), so a group reports 3400 where 3.x reported 328.
"""

from __future__ import annotations

from enum import IntEnum


class AclOperation(IntEnum):
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


def bitfield(*operations: AclOperation) -> int:
    return sum(1 << op for op in set(operations))


A = AclOperation
TOPIC_OPERATIONS = bitfield(A.READ, A.WRITE, A.CREATE, A.DESCRIBE, A.DELETE, A.ALTER,
                            A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS)
GROUP_OPERATIONS = bitfield(A.READ, A.DESCRIBE, A.DELETE, A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS)
CLUSTER_OPERATIONS = bitfield(A.CREATE, A.CLUSTER_ACTION, A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS,
                              A.IDEMPOTENT_WRITE, A.ALTER, A.DESCRIBE)

# The schemas' default, meaning "not requested" (or not computed, as for a group with an error).
NOT_PROVIDED = -(2**31)
