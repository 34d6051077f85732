"""Kafka's type of each broker config kafka-emu describes (ConfigDef.Type in KafkaConfig and the
config classes it gathers: ServerConfigs, GroupCoordinatorConfig, ShareGroupConfig,
TransactionStateManagerConfig, SocketServerConfigs, ...), as DescribeConfigs v3+ reports it.

A broker config name that is not here (and not a listener-prefixed form of one) is not one Kafka
4.x defines -- kafka-emu's own ``emu.*`` settings, ``cluster.id`` (KRaft keeps it in
meta.properties), ``advertised.host.name`` / ``advertised.port`` (removed from Kafka) -- and is
left out of the broker's DescribeConfigs, which lists Kafka's names only.
"""

from __future__ import annotations

from .resource_configs import ConfigType as T

BROKER_CONFIG_TYPES: dict[str, T] = {
    # server, sockets, listeners
    "node.id": T.INT, "broker.id": T.INT, "broker.rack": T.STRING,
    "advertised.listeners": T.STRING, "listeners": T.STRING,
    "listener.security.protocol.map": T.STRING,
    "socket.request.max.bytes": T.INT, "connections.max.idle.ms": T.LONG,
    "max.connections": T.INT, "max.connections.per.ip": T.INT,
    "connection.failed.authentication.delay.ms": T.INT, "connections.max.reauth.ms": T.LONG,
    # security
    "sasl.enabled.mechanisms": T.LIST, "sasl.server.max.receive.size": T.INT,
    "ssl.client.auth": T.STRING, "ssl.key.password": T.PASSWORD,
    "ssl.keystore.location": T.STRING, "ssl.keystore.password": T.PASSWORD,
    "ssl.keystore.type": T.STRING, "ssl.principal.mapping.rules": T.STRING,
    "ssl.truststore.location": T.STRING, "ssl.truststore.password": T.PASSWORD,
    "ssl.truststore.type": T.STRING, "sasl.jaas.config": T.PASSWORD,
    "authorizer.class.name": T.STRING,
    # topics and logs
    "num.partitions": T.INT, "auto.create.topics.enable": T.BOOLEAN,
    "default.replication.factor": T.INT, "min.insync.replicas": T.INT,
    "log.retention.bytes": T.LONG, "log.retention.ms": T.LONG,
    "log.retention.check.interval.ms": T.LONG, "log.initial.task.delay.ms": T.LONG,
    "max.incremental.fetch.session.cache.slots": T.INT,
    # group coordinator
    "offsets.topic.num.partitions": T.INT, "offsets.topic.replication.factor": T.SHORT,
    "offset.metadata.max.bytes": T.INT, "offsets.retention.minutes": T.INT,
    "offsets.retention.check.interval.ms": T.LONG,
    "group.initial.rebalance.delay.ms": T.INT, "group.min.session.timeout.ms": T.INT,
    "group.max.session.timeout.ms": T.INT, "group.max.size": T.INT,
    "group.coordinator.rebalance.protocols": T.LIST,
    "group.consumer.session.timeout.ms": T.INT, "group.consumer.min.session.timeout.ms": T.INT,
    "group.consumer.max.session.timeout.ms": T.INT,
    "group.consumer.heartbeat.interval.ms": T.INT,
    "group.consumer.min.heartbeat.interval.ms": T.INT,
    "group.consumer.max.heartbeat.interval.ms": T.INT, "group.consumer.max.size": T.INT,
    "group.consumer.assignors": T.LIST, "group.consumer.migration.policy": T.STRING,
    "group.consumer.regex.refresh.interval.ms": T.INT,
    # share groups
    "group.share.enable": T.BOOLEAN, "group.share.assignors": T.LIST,
    "group.share.session.timeout.ms": T.INT, "group.share.min.session.timeout.ms": T.INT,
    "group.share.max.session.timeout.ms": T.INT, "group.share.heartbeat.interval.ms": T.INT,
    "group.share.min.heartbeat.interval.ms": T.INT,
    "group.share.max.heartbeat.interval.ms": T.INT, "group.share.max.size": T.INT,
    "group.share.record.lock.duration.ms": T.INT,
    "group.share.min.record.lock.duration.ms": T.INT,
    "group.share.max.record.lock.duration.ms": T.INT, "group.share.delivery.count.limit": T.INT,
    "group.share.min.delivery.count.limit": T.INT, "group.share.max.delivery.count.limit": T.INT,
    "group.share.partition.max.record.locks": T.INT, "group.share.max.share.sessions": T.INT,
    # transactions
    "transaction.partition.verification.enable": T.BOOLEAN,
    "transaction.max.timeout.ms": T.INT, "transactional.id.expiration.ms": T.INT,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": T.INT,
    "transaction.remove.expired.transaction.cleanup.interval.ms": T.INT,
    "transaction.state.log.num.partitions": T.INT,
}

# Kafka's internal configs (ConfigDef.defineInternal): listed only where set, as ConfigHelper
# lists a broker's originals and its non-internal values
INTERNAL = frozenset({"group.consumer.regex.refresh.interval.ms", "group.share.enable",
                      "log.initial.task.delay.ms"})

_LISTENER_PREFIX = "listener.name."


def broker_config_type(name: str) -> T | None:
    """Kafka's type of broker config ``name`` (a ``listener.name.<l>.<config>`` override has its
    config's type, as KafkaConfig.configType finds it through the synonyms), else None: a name
    Kafka does not define."""
    found = BROKER_CONFIG_TYPES.get(name)
    if found is None and name.startswith(_LISTENER_PREFIX):
        rest = name[len(_LISTENER_PREFIX):].partition(".")[2]
        found = BROKER_CONFIG_TYPES.get(rest)
        if found is None and "." in rest:  # listener.name.<l>.<mechanism>.sasl.jaas.config
            found = BROKER_CONFIG_TYPES.get(rest.partition(".")[2])
    return found
