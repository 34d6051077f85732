"""What each configuration key changes: the one hand-written table of the configuration page.

Names, defaults and Kafka's defaults come from the declarations (``broker/config.py``,
``coordinator/config.py``, ``coordinator/share/config.py``, ``security/config.py``, their
``KAFKA_DEFAULTS``, and ``broker/resource_configs.py``'s ``GROUP_CONFIGS``);
tests/docs/test_reference_pages.py fails when a declared key has no note here or a note names
no key. ``Note.default`` words a default the code holds as "unset" (None, empty) or random;
``Note.kafka`` words Kafka's side where the name is not Kafka's (or not Kafka's any more).
"""

from __future__ import annotations

from typing import NamedTuple


class Note(NamedTuple):
    meaning: str
    default: str | None = None  # words for a default the code holds as None / empty / random
    kafka: str | None = None  # Kafka's side, where no KAFKA_DEFAULTS entry says it


SEE_DIFFERENCES = "see [Differences from Kafka](../explanation/differences-from-kafka.md)"

BROKER: dict[str, Note] = {
    "node.id": Note("the first broker's node id (the others count up from it)"),
    "broker.id": Note("a synonym of `node.id`, as older Kafka configs spell it"),
    "cluster.id": Note("the cluster id Metadata and DescribeCluster report",
                       default="random (`kafka-emu-` and 12 hex digits)",
                       kafka="formatted into meta.properties by kafka-storage.sh, not a config"),
    "advertised.host.name": Note("the host Metadata, FindCoordinator and DescribeCluster report",
                                 default="the host the client connected to",
                                 kafka="removed (use advertised.listeners)"),
    "advertised.port": Note("the port those answers report", default="the bound port",
                            kafka="removed (use advertised.listeners)"),
    "advertised.listeners": Note(
        "`NAME://host:port,...`: the address each listener advertises (the first entry also "
        "sets the broker-wide advertised host and port)",
        default="the address the client connected to"),
    "socket.request.max.bytes": Note("a larger frame closes the connection"),
    "connections.max.idle.ms": Note("a connection idle this long is closed"),
    "max.connections": Note("connections the broker accepts at once; more are closed at accept"),
    "max.connections.per.ip": Note("connections one client address may hold at once"),
    "max.incremental.fetch.session.cache.slots": Note(
        "fetch sessions (KIP-227) the broker keeps; 0: none, every fetch is a full one"),
    "num.partitions": Note("partitions of an auto-created topic"),
    "auto.create.topics.enable": Note("create a topic on Metadata / Produce for it"),
    "log.retention.bytes": Note("topics' default `retention.bytes`: a per-partition size cap, "
                                "enforced by the retention check"),
    "log.retention.ms": Note("topics' default `retention.ms` (7 days); -1 keeps records "
                             "forever"),
    "log.retention.check.interval.ms": Note(
        "how often the log retention check runs, on the emulator's clock (`advance` moves it)"),
    "log.initial.task.delay.ms": Note("when the first retention check runs after start"),
    "broker.rack": Note("the brokers' racks, comma-separated, one per broker (also "
                        "`serve --rack`)", default="none"),
    "offsets.topic.num.partitions": Note(
        "partitions of `__consumer_offsets`; a group's coordinator leads its partition"),
    "offsets.topic.replication.factor": Note(
        "replicas of each `__consumer_offsets` partition (capped at the number of brokers)"),
    "default.replication.factor": Note(
        "replicas of a topic created without a factor (auto-created, CreateTopics with -1)"),
}

COORDINATOR: dict[str, Note] = {
    "group.initial.rebalance.delay.ms": Note(
        "wait before the first rebalance of an empty classic group completes (re-armed as "
        f"members join); measured, {SEE_DIFFERENCES}"),
    "group.min.session.timeout.ms": Note("lower bound of a classic member's session timeout"),
    "group.max.session.timeout.ms": Note("upper bound of a classic member's session timeout"),
    "group.max.size": Note("members per classic group"),
    "offsets.retention.minutes": Note("how long committed offsets of an empty group are kept"),
    "offsets.retention.check.interval.ms": Note("how often offset retention runs"),
    "offset.metadata.max.bytes": Note("longest commit metadata (OFFSET_METADATA_TOO_LARGE)"),
    "group.coordinator.rebalance.protocols": Note(
        "`classic` alone turns KIP-848 off (ConsumerGroupHeartbeat / ConsumerGroupDescribe not "
        "advertised); `share` is accepted, as in Kafka 4.2, where the `share.version` feature "
        "governs share groups"),
    "group.consumer.heartbeat.interval.ms": Note(
        f"heartbeat interval the coordinator gives KIP-848 members; {SEE_DIFFERENCES}"),
    "group.consumer.min.heartbeat.interval.ms": Note(
        "lower bound of `group.consumer.heartbeat.interval.ms` and of a group's own"),
    "group.consumer.max.heartbeat.interval.ms": Note(
        "upper bound of `group.consumer.heartbeat.interval.ms` and of a group's own"),
    "group.consumer.session.timeout.ms": Note(
        "a KIP-848 member is fenced after this long without a heartbeat"),
    "group.consumer.min.session.timeout.ms": Note(
        "lower bound of `group.consumer.session.timeout.ms` and of a group's own"),
    "group.consumer.max.session.timeout.ms": Note(
        "upper bound of `group.consumer.session.timeout.ms` and of a group's own"),
    "group.consumer.assignors": Note(
        "server-side assignors; the first is the default (Kafka's class names are accepted "
        "too)"),
    "group.consumer.max.size": Note("members per consumer group"),
    "group.consumer.regex.refresh.interval.ms": Note(
        "how often a group resolves its topic regexes again even without a topic change "
        "(minimum 10000)"),
    "group.consumer.migration.policy": Note(
        "`disabled` / `upgrade` / `downgrade` / `bidirectional`, any case: which non-empty "
        "groups convert between the classic and the consumer type (empty groups always "
        "convert)"),
}

SHARE: dict[str, Note] = {
    "group.share.heartbeat.interval.ms": Note(
        f"heartbeat interval given to share members; {SEE_DIFFERENCES}"),
    "group.share.min.heartbeat.interval.ms": Note(
        "lower bound of the share heartbeat interval (broker-wide and per group)"),
    "group.share.max.heartbeat.interval.ms": Note(
        "upper bound of the share heartbeat interval (broker-wide and per group)"),
    "group.share.session.timeout.ms": Note(
        "a share member is fenced after this long without a heartbeat"),
    "group.share.min.session.timeout.ms": Note("lower bound of the share session timeout"),
    "group.share.max.session.timeout.ms": Note("upper bound of the share session timeout"),
    "group.share.max.size": Note("members per share group"),
    "group.share.record.lock.duration.ms": Note(
        "how long an acquired record stays locked to its consumer (a group's "
        "`share.record.lock.duration.ms` overrides it)"),
    "group.share.min.record.lock.duration.ms": Note("lower bound of the record lock duration"),
    "group.share.max.record.lock.duration.ms": Note("upper bound of the record lock duration"),
    "group.share.delivery.count.limit": Note(
        "deliveries of a record before it is archived (a group's `share.delivery.count.limit` "
        "overrides it)"),
    "group.share.min.delivery.count.limit": Note("lower bound of the delivery count limit"),
    "group.share.max.delivery.count.limit": Note("upper bound of the delivery count limit"),
    "group.share.partition.max.record.locks": Note(
        "records of one share-partition that may be acquired at once"),
    "group.share.max.share.sessions": Note("share sessions the broker keeps at once"),
    "group.share.assignors": Note("the share groups' assignor: exactly one, `simple`"),
    "group.share.enable": Note(
        "Kafka's internal switch: `true` turns share groups on whatever `emu.share.version` "
        "says"),
}

TRANSACTIONS: dict[str, Note] = {
    "transaction.max.timeout.ms": Note(
        "the longest `transaction.timeout.ms` a producer may ask for "
        "(INVALID_TRANSACTION_TIMEOUT)"),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": Note(
        "how often timed-out transactions are aborted, on the emulator's clock"),
    "transactional.id.expiration.ms": Note("an idle transactional id expires after this long"),
    "transaction.remove.expired.transaction.cleanup.interval.ms": Note(
        "how often expired transactional ids are removed"),
    "transaction.state.log.num.partitions": Note(
        "partitions of `__transaction_state`; a transactional id's coordinator leads its "
        "partition"),
    "transaction.partition.verification.enable": Note(
        "a transactional Produce or TxnOffsetCommit for a partition or group not in the "
        "producer's transaction is checked with the transaction coordinator (KIP-890); `false` "
        "trusts the client"),
}

SECURITY: dict[str, Note] = {
    "listeners": Note(
        "`NAME://host:port,...`: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, or a name mapped by "
        "`listener.security.protocol.map`", default="one PLAINTEXT listener on `--host`/`--port`"),
    "listener.security.protocol.map": Note("`NAME:PROTOCOL,...` (`INTERNAL:SASL_PLAINTEXT`)",
                                           default="each protocol to itself"),
    "ssl.keystore.location": Note("the TLS listeners' key and certificate chain",
                                  default="a CA and certificate generated at start"),
    "ssl.keystore.type": Note("`PEM` or `PKCS12` (kafka-emu reads no Java keystores)"),
    "ssl.key.password": Note("the password of the keystore's private key", default="none"),
    "ssl.keystore.password": Note("the PKCS12 keystore's password", default="none"),
    "ssl.truststore.location": Note("CA certificates (PEM) client certificates are checked "
                                    "against", default="the generated CA"),
    "ssl.truststore.type": Note("`PEM` or `PKCS12`"),
    "ssl.client.auth": Note("`required` / `requested` / `none`: whether TLS clients must show a "
                            "certificate"),
    "ssl.principal.mapping.rules": Note("how a client certificate's DN becomes the principal"),
    "sasl.enabled.mechanisms": Note("SASL mechanisms offered, broker-wide"),
    "listener.name.NAME.sasl.enabled.mechanisms": Note(
        "SASL mechanisms offered on one listener", default="`sasl.enabled.mechanisms`"),
    "sasl.jaas.config": Note(
        "a PlainLoginModule line's `user_NAME=\"password\"` options add users (also "
        "`listener.name.NAME.MECHANISM.sasl.jaas.config`)", default="none"),
    "emu.sasl.users": Note("`user:password,...`: PLAIN passwords and SCRAM credentials of "
                           "every listener", default="none"),
    "connections.max.reauth.ms": Note(
        "KIP-368 session lifetime (0: none, except an OAUTHBEARER token's expiry)"),
    "connection.failed.authentication.delay.ms": Note(
        "how long a failed login waits before its answer and close"),
    "sasl.server.max.receive.size": Note("a larger frame before authentication fails it"),
    "authorizer.class.name": Note(
        "`org.apache.kafka.metadata.authorizer.StandardAuthorizer` turns ACLs on (the only "
        "authorizer kafka-emu has; any other class name is refused)", default="none"),
    "super.users": Note("principals allowed everything, semicolon-separated: "
                        "`User:admin;User:ops`", default="none"),
    "allow.everyone.if.no.acl.found": Note(
        "allow a request on a resource no ACL covers at all (as Kafka: any ACL on the "
        "resource, even for another principal, takes this away)"),
    "emu.acls": Note(
        "ACLs present from the start, for tests without an admin client: `ALLOW User:alice "
        "READ TOPIC orders; DENY User:* WRITE TOPIC:PREFIXED tmp- 10.0.0.1` (`PERMISSION "
        "PRINCIPAL OPERATION RESOURCE_TYPE[:PATTERN] NAME [HOST]`, Kafka's enum names; names and principals "
        "without spaces or semicolons); refused at start with Kafka's reason where Kafka would refuse the ACL", default="none"),
}

EMU: dict[str, Note] = {
    "emu.api.max.versions": Note(
        "cap API versions to emulate an older broker, e.g. `JoinGroup:4,Metadata:9`",
        default="none"),
    "emu.clock": Note("`manual`: the coordinator's time moves only when the control plane "
                      "advances it (also `serve --clock`)"),
    "emu.timeline.max.events": Note("events the control plane's timeline keeps; 0 turns it off"),
    "emu.brokers": Note("brokers in one process (also `serve --brokers`)"),
    "emu.coordinator.load.time.ms": Note(
        "how long a moved coordinator answers COORDINATOR_LOAD_IN_PROGRESS before serving its "
        "groups"),
    "emu.frame.read.timeout.ms": Note(
        "a request frame that has started arriving must finish within this long, or the "
        "connection is closed"),
    "emu.group.consumer.regex.min.refresh.interval.ms": Note(
        f"least time between two resolutions of a group's regexes; {SEE_DIFFERENCES}"),
    "emu.share.version": Note(
        "the finalized `share.version` feature (stands in for `kafka-features.sh`); 0 turns "
        "share groups off"),
    "emu.transaction.version": Note(
        "the finalized `transaction.version` feature (stands in for `kafka-features.sh`): the "
        "level ApiVersions advertises and the one the coordinator's own aborts (timeout, "
        "fencing InitProducerId, the control plane's abort) run at -- at 2 they bump the epoch "
        "twice (KIP-890); a client's request follows its own version, as in Kafka",
        kafka="`transaction.version` 2 on a cluster formatted by Kafka 4.x (0 before 4.0)"),
}

# Group configs (IncrementalAlterConfigs / DescribeConfigs on a GROUP resource, KIP-848/932)
GROUP: dict[str, Note] = {
    "consumer.session.timeout.ms": Note("this consumer group's member session timeout"),
    "consumer.heartbeat.interval.ms": Note("this consumer group's heartbeat interval"),
    "share.session.timeout.ms": Note("this share group's member session timeout"),
    "share.heartbeat.interval.ms": Note("this share group's heartbeat interval"),
    "share.record.lock.duration.ms": Note("this share group's record lock duration"),
    "share.delivery.count.limit": Note("this share group's delivery count limit"),
    "share.auto.offset.reset": Note(
        "where a share group starts on a partition it has no state for: `latest`, `earliest` "
        "or `by_duration:<ISO-8601 duration>`"),
    "share.isolation.level": Note(
        "`read_uncommitted` or `read_committed`: whether the group's share consumers are "
        "delivered records of transactions not committed"),
}

SECTIONS: tuple[tuple[str, str, dict[str, Note]], ...] = (
    ("Broker", "the server, its sockets, topics and the log, the cluster in one process",
     BROKER),
    ("Group coordinator", "classic groups, KIP-848 consumer groups and committed offsets",
     COORDINATOR),
    ("Share groups", "KIP-932 share groups (queues)", SHARE),
    ("Transactions", "the transaction coordinator (KIP-98, KIP-447, KIP-890)", TRANSACTIONS),
    ("Security", "listeners, TLS, SASL and ACLs", SECURITY),
    ("kafka-emu's own", "settings Kafka does not have (`emu.*`)", EMU),
)
