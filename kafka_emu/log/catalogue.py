"""The topic catalogue: names, topic ids, partitions and per-topic config.

Theory of operation
-------------------
One ``TopicCatalogue`` per broker maps topic names and topic ids to ``Topic`` entries, each owning
its ``PartitionLog``s. It is the only place topics are born or die, and each change bumps
``version`` so a broker can cheaply notice that cached metadata is stale. Deletion is immediate
(Kafka's is asynchronous but invisible to clients once acknowledged); re-creating a name gives a
new topic id and empty logs.

Creation follows the KRaft controller (ReplicationControlManager.createTopics), checks in its order:

* an existing name is TOPIC_ALREADY_EXISTS;
* a bad name is INVALID_TOPIC_EXCEPTION (Topic.validate: non-empty, at most 249 chars, only ASCII
  ``[a-zA-Z0-9._-]``, not "." or ".."); so is a name that differs from an existing one only by
  '.' versus '_', because Kafka's metric names would collide ("collides with existing topic");
* ``num_partitions`` of -1 means the default (CreateTopics v4+, KIP-464); 0 or below -1 is
  INVALID_PARTITIONS. There is no partition maximum as such in Kafka; the controller refuses an
  operation needing more than 10 000 metadata records (one per topic, partition and config)
  with POLICY_VIOLATION ("Unable to perform excessively large batch operation"), and so do we;
* configs are parsed by ``LogConfig.with_overrides`` (INVALID_CONFIG).

Topic ids are random version-4 UUIDs unless a ``uuid_factory`` is injected (tests inject a counter
for determinism). As Kafka's Uuid.randomUuid does, ids that are reserved (all-zero, or 1: the
metadata topic) or whose base64 form starts with '-' are redrawn, since command-line tools would
read such an id as a flag. Internal topic names (``__consumer_offsets``...) are ordinary here.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable, Iterator, Mapping

import attrs

from kafka_emu.errors import ErrorCode, KafkaError
from kafka_emu.log.config import LogConfig
from kafka_emu.log.partition import PartitionLog

MAX_NAME_LENGTH = 249
MAX_RECORDS_PER_USER_OP = 10_000  # QuorumController.MAX_RECORDS_PER_USER_OP
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_RESERVED_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})


def topic_name_error(name: str) -> str | None:
    """Why Kafka would refuse ``name`` as a topic name, or None if it is fine."""
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if not _LEGAL_NAME.fullmatch(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(name: str) -> None:
    reason = topic_name_error(name)
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")


def _unify(name: str) -> str:
    return name.replace(".", "_")


@attrs.define(eq=False)
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: tuple[PartitionLog, ...]
    config: LogConfig
    configs: dict[str, str]  # the overrides given at creation, as strings

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    def partition(self, index: int) -> PartitionLog:
        if 0 <= index < len(self.partitions):
            return self.partitions[index]
        raise KafkaError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"This server does not host this topic-partition: {self.name}-{index}",
        )


@attrs.define(eq=False)
class TopicCatalogue:
    default_config: LogConfig = attrs.field(factory=LogConfig)
    default_num_partitions: int = 1
    uuid_factory: Callable[[], uuid.UUID] = uuid.uuid4
    version: int = attrs.field(init=False, default=0)
    _by_name: dict[str, Topic] = attrs.field(init=False, factory=dict)
    _by_id: dict[uuid.UUID, Topic] = attrs.field(init=False, factory=dict)
    _by_unified: dict[str, str] = attrs.field(init=False, factory=dict)
    # get(name): the Topic or None. The dict's own bound ``get`` (``_by_name`` is only ever
    # changed in place), not a method calling it: the commit and fetch paths ask per partition.
    get: Callable[[str], Topic | None] = attrs.field(init=False, repr=False)

    @get.default
    def _get_default(self) -> Callable[[str], Topic | None]:
        return self._by_name.get

    # --- lookups -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[Topic]:
        """Topics in creation order (Metadata lists them this way)."""
        return iter(list(self._by_name.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get_by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def topic(self, name: str) -> Topic:
        topic = self._by_name.get(name)
        if topic is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"This server does not host this topic: {name}",
            )
        return topic

    def topic_by_id(self, topic_id: uuid.UUID) -> Topic:
        topic = self._by_id.get(topic_id)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, f"Topic id {topic_id} does not exist")
        return topic

    def partition(self, name: str, index: int) -> PartitionLog:
        return self.topic(name).partition(index)

    def partition_by_id(self, topic_id: uuid.UUID, index: int) -> PartitionLog:
        return self.topic_by_id(topic_id).partition(index)

    # --- CreateTopics / DeleteTopics ---------------------------------------------------------

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        *,
        configs: Mapping[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic:
        """Create ``name`` (or, with ``validate_only``, build it without registering it)."""
        if name in self._by_name:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        validate_topic_name(name)
        colliding = self._by_unified.get(_unify(name))
        if colliding is not None:
            raise KafkaError(
                ErrorCode.INVALID_TOPIC_EXCEPTION,
                f"Topic '{name}' collides with existing topic: {colliding}",
            )
        if num_partitions == -1:
            num_partitions = self.default_num_partitions
        elif num_partitions <= 0:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
        overrides = dict(configs or {})
        config = self.default_config.with_overrides(overrides)
        if 1 + num_partitions + len(overrides) > MAX_RECORDS_PER_USER_OP:
            raise KafkaError(
                ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation."
            )
        topic = Topic(
            name=name,
            topic_id=self._new_topic_id(),
            partitions=tuple(PartitionLog(config=config) for _ in range(num_partitions)),
            config=config,
            configs=overrides,  # type: ignore[arg-type]  # nulls were refused above
        )
        if not validate_only:
            self._by_name[name] = topic
            self._by_id[topic.topic_id] = topic
            self._by_unified[_unify(name)] = name
            self.version += 1
        return topic

    def add_partitions(self, name: str, count: int, *, assignments: int | None = None,
                       validate_only: bool = False) -> Topic:
        """Grow ``name`` to ``count`` partitions (CreatePartitions), with the controller's checks
        in its order (ReplicationControlManager.createPartitions). ``assignments`` is how many
        manual assignments the request carried (None: none given)."""
        topic = self.topic(name)
        current = len(topic.partitions)
        if count == current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
        if count < current:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"The topic {name} currently has {current} partition(s); {count} would not be an increase.",
            )
        additional = count - current
        if assignments is not None and assignments != additional:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only {assignments} "
                "assignment(s) were specified.",
            )
        if additional > MAX_RECORDS_PER_USER_OP:
            raise KafkaError(
                ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation."
            )
        if not validate_only:
            topic.partitions += tuple(PartitionLog(config=topic.config) for _ in range(additional))
            self.version += 1
        return topic

    def set_topic_configs(self, name: str, overrides: Mapping[str, str | None], *,
                          validate_only: bool = False) -> Topic:
        """Make ``overrides`` the topic's whole set of config overrides (AlterConfigs and, after
        merging, IncrementalAlterConfigs); validated as at creation, then applied to every
        partition so the data path follows at once."""
        topic = self.topic(name)
        config = self.default_config.with_overrides(overrides)
        if not validate_only:
            topic.config = config
            topic.configs = dict(overrides)  # type: ignore[arg-type]  # nulls were refused above
            for partition in topic.partitions:
                partition.config = config
            self.version += 1
        return topic

    def ensure_topic(self, name: str, num_partitions: int = -1) -> Topic:
        """The topic, auto-created first if missing (auto.create.topics.enable)."""
        topic = self._by_name.get(name)
        if topic is None:
            topic = self.create_topic(name, num_partitions)
        return topic

    def delete_topic(self, name: str) -> Topic:
        topic = self.topic(name)
        self._remove(topic)
        return topic

    def delete_topic_by_id(self, topic_id: uuid.UUID) -> Topic:
        topic = self.topic_by_id(topic_id)
        self._remove(topic)
        return topic

    def _remove(self, topic: Topic) -> None:
        del self._by_name[topic.name]
        del self._by_id[topic.topic_id]
        del self._by_unified[_unify(topic.name)]
        self.version += 1

    def _new_topic_id(self) -> uuid.UUID:
        for _ in range(1000):
            topic_id = self.uuid_factory()
            if (
                topic_id not in _RESERVED_IDS
                and topic_id not in self._by_id
                and not base64.urlsafe_b64encode(topic_id.bytes).startswith(b"-")
            ):
                return topic_id
        raise RuntimeError("uuid_factory keeps returning reserved or used topic ids")
