"""Admin APIs over real sockets (issue #13 item 3): the answers Kafka gives where clients rarely
look -- CreatePartitions checks, DescribeConfigs resource errors, config sources and synonyms,
AlterConfigs replacing overrides and changing the data path, IncrementalAlterConfigs list
operations, DescribeCluster endpoint types, DescribeTopicPartitions paging."""

from kafka_emu.errors import ErrorCode
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import alter_configs as ac
from kafka_emu.protocol.messages import create_partitions as cp
from kafka_emu.protocol.messages import describe_cluster as dc
from kafka_emu.protocol.messages import describe_configs as dcfg
from kafka_emu.protocol.messages import describe_topic_partitions as dtp
from kafka_emu.protocol.messages import incremental_alter_configs as iac
from kafka_emu.broker.resource_configs import AlterOp, ConfigSource, ResourceType
from kafka_emu.testing.wire import WireClient

TOPIC, BROKER, GROUP = ResourceType.TOPIC, ResourceType.BROKER, ResourceType.GROUP


async def client(start_broker, settings=None, topics=None):
    bound = await start_broker(settings, topics=topics)
    return bound, await WireClient.connect(bound.host, bound.port)


def describe(resource_type, name, keys=None, synonyms=False):
    return dcfg.DescribeConfigsRequest(resources=[dcfg.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=keys)],
        include_synonyms=synonyms)


async def test_create_partitions_answers_each_topic_as_the_controller_does(start_broker):
    bound, wire = await client(start_broker, topics={"a": 2, "b": 1})
    api = BY_NAME["CreatePartitions"]
    response = await wire.request(api, 3, cp.CreatePartitionsRequest(topics=[
        cp.CreatePartitionsTopic(name="a", count=2),
        cp.CreatePartitionsTopic(name="b", count=3, assignments=[
            cp.CreatePartitionsAssignment(broker_ids=[1])]),
        cp.CreatePartitionsTopic(name="nope", count=2),
        cp.CreatePartitionsTopic(name="dup", count=2),
        cp.CreatePartitionsTopic(name="dup", count=2)]))
    got = [(r.name, r.error_code, r.error_message) for r in response.results]
    # ControllerApis.createPartitions: a topic named twice is answered once, ahead of the rest
    assert got == [
        ("dup", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("a", ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s)."),
        ("b", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
    assert bound.broker.topics.lookup("b").partitions == 1  # nothing changed
    ok = await wire.request(api, 0, cp.CreatePartitionsRequest(topics=[
        cp.CreatePartitionsTopic(name="b", count=4)]))
    assert ok.results[0].error_code == ErrorCode.NONE
    assert bound.broker.topics.lookup("b").partitions == 4


async def test_create_partitions_manual_assignments_as_validate_manual_partition_assignment(
        start_broker):
    bound, wire = await client(start_broker, topics={"a": 1, "b": 1, "c": 1, "d": 1, "e": 1})
    api = BY_NAME["CreatePartitions"]

    def grow(name, *assignments):
        return cp.CreatePartitionsTopic(name=name, count=1 + len(assignments), assignments=[
            cp.CreatePartitionsAssignment(broker_ids=list(a)) for a in assignments])
    response = await wire.request(api, 3, cp.CreatePartitionsRequest(topics=[
        grow("a", [1], [7]), grow("b", []), grow("c", [1, 1]), grow("d", [1]),
        grow("e", [9, 1])]))
    assert [(r.name, r.error_code, r.error_message) for r in response.results] == [
        ("a", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 7, but no such broker is registered."),
        ("b", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes an empty replica list."),
        ("c", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes the broker 1 more than once."),
        ("d", ErrorCode.NONE, None),
        ("e", ErrorCode.INVALID_REPLICA_ASSIGNMENT,  # sorted first: broker 1 is fine, 9 is not
         "The manual partition assignment includes broker 9, but no such broker is registered.")]
    assert [bound.broker.topics.lookup(n).partitions for n in "abcde"] == [1, 1, 1, 2, 1]
    # the count is checked before the assignments: no increase with an unknown broker
    response = await wire.request(api, 3, cp.CreatePartitionsRequest(topics=[
        cp.CreatePartitionsTopic(name="d", count=2, assignments=[
            cp.CreatePartitionsAssignment(broker_ids=[7])])]))
    assert (response.results[0].error_code, response.results[0].error_message) == (
        ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s).")
    response = await wire.request(api, 3, cp.CreatePartitionsRequest(topics=[
        cp.CreatePartitionsTopic(name="d", count=3, assignments=[
            cp.CreatePartitionsAssignment(broker_ids=[1])])]))
    assert response.results[0].error_code == ErrorCode.NONE


async def test_describe_configs_errors_per_resource_as_kafka(start_broker):
    bound, wire = await client(start_broker, topics={"t": 1})
    api = BY_NAME["DescribeConfigs"]
    request = dcfg.DescribeConfigsRequest(resources=[
        dcfg.DescribeConfigsResource(resource_type=TOPIC, resource_name="missing"),
        dcfg.DescribeConfigsResource(resource_type=TOPIC, resource_name="bad name!"),
        dcfg.DescribeConfigsResource(resource_type=BROKER, resource_name="99"),
        dcfg.DescribeConfigsResource(resource_type=7, resource_name="x"),
        dcfg.DescribeConfigsResource(resource_type=GROUP, resource_name="")])
    response = await wire.request(api, 4, request)
    codes = [(r.error_code, r.error_message) for r in response.results]
    assert codes[0] == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
    assert codes[1][0] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert codes[2] == (ErrorCode.INVALID_REQUEST,
                        "Unexpected broker id, expected 1 or empty string, but received 99")
    assert codes[3] == (ErrorCode.INVALID_REQUEST, "Unsupported resource type: UNKNOWN")
    assert codes[4] == (ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    assert all(not r.configs for r in response.results)


async def test_topic_config_sources_and_synonyms(start_broker):
    bound, wire = await client(start_broker, {"log.retention.bytes": 1000}, topics={"t": 1})
    api = BY_NAME["DescribeConfigs"]
    await wire.request(BY_NAME["AlterConfigs"], 2, ac.AlterConfigsRequest(resources=[
        ac.AlterConfigsResource(resource_type=TOPIC, resource_name="t", configs=[
            ac.AlterableConfig(name="retention.bytes", value="500")])]))
    response = await wire.request(api, 4, describe(
        TOPIC, "t", ["retention.bytes", "segment.ms", "no.such"], synonyms=True))
    by_name = {c.name: c for c in response.results[0].configs}
    assert set(by_name) == {"retention.bytes", "segment.ms"}
    retention = by_name["retention.bytes"]
    assert (retention.value, retention.config_source) == ("500", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.bytes", "500", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.bytes", "1000", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.bytes", "-1", ConfigSource.DEFAULT_CONFIG)]
    segment = by_name["segment.ms"]
    assert (segment.value, segment.config_source) == ("604800000", ConfigSource.DEFAULT_CONFIG)


async def test_alter_configs_replaces_overrides_and_the_log_follows(start_broker):
    bound, wire = await client(start_broker, topics={"t": 2})
    alter = BY_NAME["AlterConfigs"]

    async def alter_to(configs, validate_only=False):
        response = await wire.request(alter, 1, ac.AlterConfigsRequest(
            validate_only=validate_only, resources=[ac.AlterConfigsResource(
                resource_type=TOPIC, resource_name="t",
                configs=[ac.AlterableConfig(name=k, value=v) for k, v in configs.items()])]))
        return response.responses[0]

    catalogue = bound.broker.topics.catalogue
    assert (await alter_to({"max.message.bytes": "100"}, validate_only=True)).error_code == 0
    assert catalogue.get("t").configs == {}
    assert (await alter_to({"max.message.bytes": "100", "retention.ms": "5"})).error_code == 0
    assert catalogue.get("t").configs == {"max.message.bytes": "100", "retention.ms": "5"}
    assert all(p.config.max_message_bytes == 100 for p in catalogue.get("t").partitions)
    # AlterConfigs replaces: retention.ms goes back to its default
    assert (await alter_to({"max.message.bytes": "200"})).error_code == 0
    assert catalogue.get("t").configs == {"max.message.bytes": "200"}
    refused = await alter_to({"max.message.bytes": "nope"})
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value nope for configuration max.message.bytes: Not a number of type INT")
    assert catalogue.get("t").configs == {"max.message.bytes": "200"}  # nothing changed
    missing = await wire.request(BY_NAME["AlterConfigs"], 2, ac.AlterConfigsRequest(resources=[
        ac.AlterConfigsResource(resource_type=TOPIC, resource_name="gone", configs=[
            ac.AlterableConfig(name="retention.ms", value="1")])]))
    assert (missing.responses[0].error_code, missing.responses[0].error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'gone' does not exist.")


async def test_incremental_alter_configs_list_operations_and_refusals(start_broker):
    bound, wire = await client(start_broker, topics={"t": 1})
    api = BY_NAME["IncrementalAlterConfigs"]

    async def apply(resource_type, name, *ops):
        response = await wire.request(api, 1, iac.IncrementalAlterConfigsRequest(resources=[
            iac.IncrementalAlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=[
                    iac.IncrementalAlterableConfig(name=n, config_operation=op, value=v)
                    for n, op, v in ops])]))
        r = response.responses[0]
        return r.error_code, r.error_message

    catalogue = bound.broker.topics.catalogue
    assert (await apply(TOPIC, "t", ("cleanup.policy", AlterOp.APPEND, "compact")))[0] == 0
    assert catalogue.get("t").configs["cleanup.policy"] == "delete,compact"
    assert (await apply(TOPIC, "t", ("cleanup.policy", AlterOp.SUBTRACT, "delete")))[0] == 0
    assert catalogue.get("t").config.cleanup_policy == {"compact"}
    # ConfigurationControlManager's wording (Kafka 4.x sends topic configs to the controller)
    assert await apply(TOPIC, "t", ("retention.ms", AlterOp.APPEND, "1")) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert await apply(TOPIC, "t", ("retention.ms", AlterOp.SUBTRACT, "1")) == (
        ErrorCode.INVALID_CONFIG,
        "Can't SUBTRACT to key retention.ms because its type is not LIST.")
    assert await apply(TOPIC, "t", ("segment.bytes", AlterOp.SET, "lots")) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value lots for configuration segment.bytes: Not a number of type INT")
    assert await apply(TOPIC, "t", ("retention.ms", AlterOp.SET, " 1x")) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value  1x for configuration retention.ms: Not a number of type LONG")
    assert await apply(TOPIC, "t", ("preallocate", AlterOp.SET, "yes")) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value yes for configuration preallocate: Expected value to be either true or false")
    assert await apply(TOPIC, "t", ("min.cleanable.dirty.ratio", AlterOp.SET, "half")) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE")
    assert (await apply(TOPIC, "t", ("segment.bytes", AlterOp.SET, " 20000000 ")))[0] == 0
    # a missing topic: the configs are validated first, its absence reported last
    assert await apply(TOPIC, "gone", ("retention.ms", AlterOp.SET, "1")) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'gone' does not exist.")
    assert await apply(TOPIC, "gone", ("retention.ms", AlterOp.APPEND, "1")) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert (await apply(TOPIC, "t", ("retention.ms", AlterOp.SET, "1"),
                        ("retention.ms", AlterOp.DELETE, None)))[0] == ErrorCode.INVALID_REQUEST
    assert (await apply(BROKER, "1", ("log.retention.bytes", AlterOp.SET, "5")))[0] == \
        ErrorCode.INVALID_REQUEST
    assert (await apply(GROUP, "g", ("consumer.session.timeout.ms", AlterOp.SET, "50000")))[0] == 0
    described = await wire.request(BY_NAME["DescribeConfigs"], 4,
                                   describe(GROUP, "g", ["consumer.session.timeout.ms"]))
    [entry] = described.results[0].configs
    assert (entry.value, entry.config_source) == ("50000", ConfigSource.GROUP_CONFIG)


async def test_describe_cluster_endpoint_types(start_broker):
    bound, wire = await client(start_broker)
    api = BY_NAME["DescribeCluster"]
    ok = await wire.request(api, 1, dc.DescribeClusterRequest())
    assert ok.error_code == 0
    assert [(b.broker_id, b.port) for b in ok.brokers] == [(1, bound.port)]
    assert ok.cluster_authorized_operations == -(2**31)  # not asked for
    # AuthHelper.computeDescribeClusterResponse sets the code and message and nothing else
    controllers = await wire.request(api, 1, dc.DescribeClusterRequest(endpoint_type=2))
    assert controllers == dc.DescribeClusterResponse(
        error_code=ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        error_message="The request was sent to an endpoint of type BROKER, but we wanted an "
                      "endpoint of type CONTROLLER",
        endpoint_type=1, cluster_id="", controller_id=-1, brokers=[])
    odd = await wire.request(api, 2, dc.DescribeClusterRequest(endpoint_type=9))
    assert odd == dc.DescribeClusterResponse(
        error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, error_message="Unsupported endpoint type 9",
        endpoint_type=1, cluster_id="", controller_id=-1, brokers=[])


async def test_describe_topic_partitions_pages_with_a_cursor(start_broker):
    bound, wire = await client(start_broker, topics={"a": 3, "b": 2})
    api = BY_NAME["DescribeTopicPartitions"]
    first = await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
        topics=[dtp.TopicRequest(name="b"), dtp.TopicRequest(name="a"),
                dtp.TopicRequest(name="zz")], response_partition_limit=2))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [
        ("a", [0, 1])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("a", 2)
    second = await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
        topics=[dtp.TopicRequest(name="b"), dtp.TopicRequest(name="a"),
                dtp.TopicRequest(name="zz")], response_partition_limit=2,
        cursor=first.next_cursor))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in second.topics] == [
        ("a", [2]), ("b", [0])]
    third = await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
        topics=[dtp.TopicRequest(name="b"), dtp.TopicRequest(name="zz")],
        cursor=second.next_cursor))
    assert [(t.name, t.error_code) for t in third.topics] == [
        ("b", 0), ("zz", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert third.next_cursor is None


async def test_describe_topic_partitions_refuses_a_bad_cursor_as_kafka_does(start_broker):
    """DescribeTopicPartitionsRequestHandler throws InvalidRequestException for a cursor outside
    the requested topics or with a negative partition: every requested topic (in request order)
    is INVALID_REQUEST with nothing else, and the connection stays open. A negative index used to
    reach the handler's partition lookup and end the connection with an internal error."""
    bound, wire = await client(start_broker, topics={"a": 3, "b": 2})
    api = BY_NAME["DescribeTopicPartitions"]

    async def ask(cursor, topics=("b", "a")):
        return await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
            topics=[dtp.TopicRequest(name=n) for n in topics], response_partition_limit=10,
            cursor=cursor))

    for cursor in (dtp.Cursor(topic_name="a", partition_index=-1),
                   dtp.Cursor(topic_name="a", partition_index=-2**31),
                   dtp.Cursor(topic_name="c", partition_index=0)):
        refused = await ask(cursor)
        assert [(t.name, t.error_code, t.partitions) for t in refused.topics] == [
            ("b", ErrorCode.INVALID_REQUEST, []), ("a", ErrorCode.INVALID_REQUEST, [])]
        assert refused.next_cursor is None
    every = await ask(dtp.Cursor(topic_name="a", partition_index=-1), topics=())
    assert every.topics == [] and every.next_cursor is None
    assert bound.broker.unexpected == []
    fine = await ask(dtp.Cursor(topic_name="a", partition_index=1))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in fine.topics] == [
        ("a", [1, 2]), ("b", [0, 1])]


async def test_describe_topic_partitions_pages_before_looking_up_the_next_topic(start_broker):
    """Kafka checks the budget before it looks a topic up: once the partitions are spent the
    cursor points at the next topic even if it does not exist. A name that can never be a topic's
    is INVALID_TOPIC_EXCEPTION, an unknown internal name is marked internal."""
    bound, wire = await client(start_broker, topics={"a": 2})
    api = BY_NAME["DescribeTopicPartitions"]
    full = await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
        topics=[dtp.TopicRequest(name="a"), dtp.TopicRequest(name="b")],
        response_partition_limit=2))
    assert [t.name for t in full.topics] == ["a"]
    assert (full.next_cursor.topic_name, full.next_cursor.partition_index) == ("b", 0)
    odd = await wire.request(api, 0, dtp.DescribeTopicPartitionsRequest(
        topics=[dtp.TopicRequest(name="bad name"), dtp.TopicRequest(name="__transaction_state")],
        response_partition_limit=5))
    assert [(t.name, t.error_code, t.is_internal) for t in odd.topics] == [
        ("__transaction_state", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, True),
        ("bad name", ErrorCode.INVALID_TOPIC_EXCEPTION, False)]


async def test_offset_for_leader_epoch_answers_from_the_epoch_cache_and_fences(start_broker):
    from kafka_emu.protocol.messages import offset_for_leader_epoch as ofle
    bound, wire = await client(start_broker, topics={"t": 1})
    log = bound.broker.topics.partition("t", 0)
    log.leader_epoch = 3  # as if leadership had moved three times before any data

    async def ask(leader_epoch, current=-1, partition=0, topic="t"):
        response = await wire.request(BY_NAME["OffsetForLeaderEpoch"], 4,
                                      ofle.OffsetForLeaderEpochRequest(topics=[
                                          ofle.OffsetForLeaderTopic(topic=topic, partitions=[
                                              ofle.OffsetForLeaderPartition(
                                                  partition=partition, leader_epoch=leader_epoch,
                                                  current_leader_epoch=current)])]))
        p = response.topics[0].partitions[0]
        return p.error_code, p.leader_epoch, p.end_offset

    assert await ask(3, current=3) == (0, 3, 0)
    assert await ask(1) == (0, 1, 0)  # older than every known epoch: the next one's start
    assert await ask(7) == (0, -1, -1)
    assert await ask(3, current=2) == (ErrorCode.FENCED_LEADER_EPOCH, -1, -1)
    assert await ask(3, current=4) == (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1)
    assert (await ask(0, partition=9))[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert (await ask(0, topic="nope"))[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_elect_leaders_for_all_partitions_lists_none_and_rejects_unknown_types(start_broker):
    from kafka_emu.protocol.messages import elect_leaders as el
    bound, wire = await client(start_broker, topics={"t": 2})
    api = BY_NAME["ElectLeaders"]
    everything = await wire.request(api, 2, el.ElectLeadersRequest(election_type=0))
    assert [(r.topic, r.partition_result) for r in everything.replica_election_results] == [
        ("t", [])]
    odd = await wire.request(api, 2, el.ElectLeadersRequest(
        election_type=7, topic_partitions=[el.TopicPartitions(topic="t", partitions=[0])]))
    assert odd.error_code == ErrorCode.INVALID_REQUEST
    assert [(p.partition_id, p.error_code) for r in odd.replica_election_results
            for p in r.partition_result] == [(0, ErrorCode.INVALID_REQUEST)]
