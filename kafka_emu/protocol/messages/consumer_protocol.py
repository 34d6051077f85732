"""The embedded "consumer" protocol: subscription and assignment bytes (v0-3, never flexible).

JoinGroup metadata carries an int16 version then a ConsumerProtocolSubscription; SyncGroup
assignments carry an int16 version then a ConsumerProtocolAssignment. Newer versions may only
append fields, so a reader parses a version it does not know with its highest known schema and
ignores what follows (as Kafka's ConsumerProtocol does). v1 OwnedPartitions; v2 GenerationId;
v3 RackId (KIP-881). Assignment v1-3 equal v0. Not an API: this module has no ``API``.
"""

from __future__ import annotations

from .. import codec
from .. import primitives as p
from ..errors import DecodeError
from ..schema import BYTES, INT32, STRING, Array, field, message, struct

HIGHEST_VERSION = 3


@struct
class TopicPartition:
    # Subscription.OwnedPartitions elements are "1+" in the spec, but that field itself only
    # exists from v1, so "0+" describes the same wire for both containers.
    topic: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@message(api_key=-1, kind="data", valid="0-3")
class ConsumerProtocolSubscription:
    topics: list = field(Array(STRING), "0+")
    user_data: bytes | None = field(BYTES, "0+", nullable="0+", default=None)
    owned_partitions: list = field(Array(TopicPartition), "1+", ignorable=True)
    generation_id: int = field(INT32, "2+", default=-1, ignorable=True)
    rack_id: str | None = field(STRING, "3+", nullable="3+", default=None, ignorable=True)


@message(api_key=-1, kind="data", valid="0-3")
class ConsumerProtocolAssignment:
    assigned_partitions: list = field(Array(TopicPartition), "0+")
    user_data: bytes | None = field(BYTES, "0+", nullable="0+", default=None)


def _decode(cls: type, data: bytes):
    r = p.Reader(data)
    if r.remaining < 2:
        raise DecodeError(f"{cls.__name__}: {len(data)} bytes, no int16 version", offset=0)
    version = p.read_int16(r)
    if version < 0:
        raise DecodeError("negative version", offset=0, api=cls.__name__, version=version)
    # Trailing bytes are fields of a version newer than ours: ignored, as in Kafka.
    return codec.read_from(cls, min(version, HIGHEST_VERSION), r)


def _encode(msg, version: int) -> bytes:
    out = bytearray()
    p.write_int16(out, version)
    codec.encode_into(out, msg, version)
    return bytes(out)


def decode_subscription(data: bytes) -> ConsumerProtocolSubscription:
    """Parse JoinGroup protocol metadata; raises DecodeError if it is not a subscription."""
    return _decode(ConsumerProtocolSubscription, data)


def decode_assignment(data: bytes) -> ConsumerProtocolAssignment:
    """Parse a SyncGroup assignment; raises DecodeError if it is not an assignment."""
    return _decode(ConsumerProtocolAssignment, data)


def encode_subscription(msg: ConsumerProtocolSubscription, version: int) -> bytes:
    return _encode(msg, version)


def encode_assignment(msg: ConsumerProtocolAssignment, version: int) -> bytes:
    return _encode(msg, version)
