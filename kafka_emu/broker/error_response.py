"""One error-response builder for every API and version, as Kafka's ``getErrorResponse``.

Theory of operation. When a request fails as a whole (a handler raises ``KafkaError``, a fault
rule answers with an error), Kafka answers with a response valid for that API and version that
carries the error where the client reads it. Kafka writes that per request class; the shapes
follow a few rules, and we apply those rules to the declarations (``fields_of``), so a newly
declared API gets its error response without code here:

1. Where the version has a top-level ``error_code``, the error goes there (and into
   ``error_message`` where the version has one); the entries are then left empty -- OffsetFetch
   v2-7, Fetch v13+, LeaveGroup v3+, OffsetDelete, JoinGroup, ... Two APIs also mirror the
   entries under a top-level code (``_ALSO_PER_ENTRY``): Fetch below v13, whose older clients
   read only the partition errors, and Metadata, whose top-level code is new in v13.
2. Otherwise the request's keyed arrays are mirrored into the response's: one response entry per
   request entry (topic, partition, group, coordinator key), its keys copied (``topic`` and
   ``name``, ``partition`` and ``partition_index`` and ``index`` are the same key; an array of
   plain strings or ints fills the entry's first key of that type). An entry that has an
   ``error_code`` gets the error and stays a leaf (Metadata topics, DescribeGroups groups,
   OffsetFetch v8+ groups, CreateTopics results); one that has none is descended into (Produce,
   Fetch, ListOffsets, OffsetCommit, DeleteRecords, OffsetFetch v0-1 topics -> partitions).
3. Every other field takes its declared default, except that Kafka's "unknown" -1 fills the
   offsets, timestamps, epochs, generation, producer id and node of the built structs
   (``_unknown``), and the response's own nullable strings are null (Kafka's JoinGroup v7+
   protocol name, SyncGroup v5+ protocol type and name, Metadata cluster id).

Produce with acks=0 has no response at all (Kafka returns null there too).
"""

from __future__ import annotations

from typing import Any

from ..errors import ErrorCode
from ..protocol.schema import INT16, INT32, INT64, STRING, Api, Array, FieldSpec, fields_of
from ..protocol.versions import ALL, NONE, Versions

__all__ = ["error_entries", "error_response"]

# APIs that carry the error per entry as well as at the top (see rule 1), by the versions.
_ALSO_PER_ENTRY: dict[str, Versions] = {
    "Fetch": Versions(0, 12),  # FetchRequest.getErrorResponse: partitions only below v13
    "Metadata": ALL,  # MetadataRequest.getErrorResponse mirrors the topics
    "ElectLeaders": ALL,  # ElectLeadersRequest.getErrorResponse: top-level and per partition
}

# APIs whose response entries do not answer request entries, so nothing is mirrored: the error
# is top-level only (DescribeLogDirs answers per log dir; below v3 its error shows nowhere, as
# DescribeLogDirsRequest.getErrorResponse builds it).
_TOP_ONLY = frozenset({"DescribeLogDirs"})

# Key fields of an entry; names in one group are the same key under different spellings.
_KEY_GROUPS: tuple[tuple[str, ...], ...] = (
    ("name", "topic"),
    ("partition_index", "partition", "index", "partition_id"),
    ("topic_id",),
    ("group_id",),
    ("key",),
    ("member_id",),
    ("group_instance_id",),
    ("resource_type",),  # the config APIs' resources (DescribeConfigs, AlterConfigs, ...)
    ("resource_name",),
    ("transactional_id",),  # DescribeTransactions answers per id
    ("producer_id",),  # WriteTxnMarkers answers per marker (a producer)
)
_KEY_GROUP_OF = {name: group for group in _KEY_GROUPS for name in group}

# Arrays whose entries answer a request array one for one, in order, without a key (by the
# response entry class): one entry per request entry, with the error (CreateAclsRequest's and
# DeleteAclsRequest's getErrorResponse).
_ONE_FOR_ONE = {"AclCreationResult": "creations", "DeleteAclsFilterResult": "filters"}

# Arrays answering, once per distinct name in name order, the names of several request arrays
# (AlterUserScramCredentialsRequest.getErrorResponse: one result per user of the deletions and
# upsertions).
_BY_NAME_OF = {"AlterUserScramCredentialsResult": ("deletions", "upsertions")}

_UNKNOWN_NAMES = frozenset({"generation_id", "producer_id", "producer_epoch", "node_id", "port"})
_UNKNOWN_SUFFIXES = ("offset", "watermark", "timestamp", "epoch", "append_time_ms")


def _unknown(spec: FieldSpec) -> bool:
    """An integer field Kafka fills with -1 ("unknown") in error responses."""
    if spec.type not in (INT16, INT32, INT64):
        return False
    return spec.name in _UNKNOWN_NAMES or spec.name.endswith(_UNKNOWN_SUFFIXES)


def error_response(api: Api, version: int, request: Any, code: ErrorCode | int,
                   message: str | None = None) -> Any:
    """The response ``api`` at ``version`` answering ``request`` with error ``code`` (see the
    module doc); None where Kafka sends no response (acks=0 Produce)."""
    if getattr(request, "acks", None) == 0 and api.name == "Produce":
        return None
    code = int(code)
    has_top = any(s.name == "error_code" and version in s.versions
                  for s in fields_of(api.response))
    per_entry = (not has_top or version in _ALSO_PER_ENTRY.get(api.name, NONE)) \
        and api.name not in _TOP_ONLY
    return _build(api.response, version, request, code, message, top=True, mirror=per_entry)


def error_entries(api: Api, version: int, request: Any, code: ErrorCode | int,
                  message: str | None = None) -> Any:
    """The response ``api`` at ``version`` with every keyed entry of ``request`` answered with
    ``code`` (rule 2 applied whether or not the version has a top-level code, which is set too):
    how a broker answers the entries it refuses while it serves the rest (ACLs,
    security/authorize.py)."""
    return _build(api.response, version, request, int(code), message, top=True, mirror=True)


def _present(cls: type, version: int) -> list[FieldSpec]:
    return [s for s in fields_of(cls) if version in s.versions]


def _is_struct_array(spec: FieldSpec) -> bool:
    return isinstance(spec.type, Array) and isinstance(spec.type.element, type)


def _keys(cls: type, version: int) -> list[FieldSpec]:
    return [s for s in _present(cls, version) if s.name in _KEY_GROUP_OF]


def _build(cls: type, version: int, source: Any, code: int, message: str | None, *,
           top: bool, mirror: bool) -> Any:
    """A ``cls`` for ``source`` (the request, a request entry, or a plain key value)."""
    values: dict[str, Any] = {}
    present = _present(cls, version)
    is_leaf = any(s.name == "error_code" for s in present)
    for spec in present:
        name = spec.name
        if name == "error_code":
            values[name] = code
        elif name == "error_message":
            values[name] = message
        elif name == "throttle_time_ms":
            values[name] = 0
        elif not top and name in _KEY_GROUP_OF:
            values[name] = _key_value(spec, source, cls, version)
        elif _is_struct_array(spec):
            if mirror and (top or not is_leaf):
                values[name] = _mirror(spec, version, source, code, message)
        elif _unknown(spec):
            values[name] = -1
        elif top and spec.type is STRING and version in spec.nullable:
            values[name] = None
    return cls(**values)


def _key_value(spec: FieldSpec, source: Any, cls: type, version: int) -> Any:
    """The value of key ``spec`` for an entry built from ``source``."""
    if isinstance(source, (str, int)) and not isinstance(source, bool):
        # a plain string/int array entry fills the first key field of its type
        first = next((k for k in _keys(cls, version)
                      if (k.type is STRING) == isinstance(source, str)), None)
        return source if first is not None and first.name == spec.name else spec.default
    for alias in _KEY_GROUP_OF[spec.name]:
        value = getattr(source, alias, _MISSING)
        if value is not _MISSING:
            if value is None and version not in spec.nullable:
                return spec.type.zero  # Kafka: "the response does not allow null"
            return value
    return spec.default


_MISSING = object()


def _mirror(spec: FieldSpec, version: int, source: Any, code: int,
            message: str | None) -> list:
    """Entries of response array ``spec``, one per entry of the matching request array."""
    element = spec.type.element
    keys = _keys(element, version)
    union = _BY_NAME_OF.get(element.__name__)
    if union is not None:
        names = sorted({item.name for array in union for item in getattr(source, array, ())})
        return [element(user=name, error_code=code, error_message=message) for name in names]
    paired = _ONE_FOR_ONE.get(element.__name__)
    if paired is not None and not keys:
        return [_build(element, version, None, code, message, top=False, mirror=False)
                for _ in getattr(source, paired, None) or ()]
    if not keys:
        return []  # not a keyed array (brokers, node endpoints, api keys): nothing to mirror
    items = _matching_array(spec, element, keys, version, source)
    if not items:
        return []
    return [_build(element, version, item, code, message, top=False, mirror=True)
            for item in items]


def _matching_array(spec: FieldSpec, element: type, keys: list[FieldSpec], version: int,
                    source: Any) -> list:
    """The request array (of ``source``) whose entries the response array ``spec`` answers:
    the one of the same name, else the first keyed the same way (shared key, or plain values
    of a key's type)."""
    if source is None or isinstance(source, (str, int)):
        return []
    candidates = [s for s in _present(type(source), version) if isinstance(s.type, Array)]
    same = [s for s in candidates if s.name == spec.name and _fits(s, keys, version)]
    for s in same or candidates:
        if _fits(s, keys, version):
            return list(getattr(source, s.name) or ())
    return []


def _fits(request_spec: FieldSpec, keys: list[FieldSpec], version: int) -> bool:
    el = request_spec.type.element
    groups = {_KEY_GROUP_OF[k.name] for k in keys}
    if isinstance(el, type):
        return any(_KEY_GROUP_OF.get(s.name) in groups for s in _present(el, version))
    if el is STRING:
        return any(k.type is STRING for k in keys)
    if el is INT32:
        return any(k.type is INT32 for k in keys)
    return False
