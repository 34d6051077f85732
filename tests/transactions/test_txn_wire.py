"""The transaction APIs over real sockets, every version: requests encoded and responses decoded
by kafka-python's protocol classes (an encoder independent of ours), the broker answering
through its handlers, the transaction coordinator and the markers' glue."""

from __future__ import annotations

import itertools

import pytest
from kafka.protocol import admin as kpa
from kafka.protocol import producer as kpp
from kafka.protocol.api_message import ApiMessage

from kafka_emu.errors import ErrorCode as E
from kafka_emu.testing.wire import WireClient

_ids = itertools.count(1)
TOPICS = {"t": 2, "u": 1}


async def call(wire: WireClient, request: ApiMessage, version: int, response_cls):
    request.with_header(correlation_id=next(_ids), client_id="txn-wire")
    await wire.send_raw(request.encode(version=version, header=True, framed=True))
    frame = await wire.receive_frame()
    return response_cls.decode(frame, version=version, header=True)


async def connect(start_broker, settings=None, observer=None):
    bound = await start_broker(settings, topics=TOPICS, observer=observer)
    return bound, await WireClient.connect(bound.host, bound.port)


async def init(wire, tid, version=5, timeout_ms=60_000, pid=-1, epoch=-1):
    kw = dict(transactional_id=tid, transaction_timeout_ms=timeout_ms)
    if version >= 3:
        kw.update(producer_id=pid, producer_epoch=epoch)
    return await call(wire, kpp.InitProducerIdRequest(**kw), version, kpp.InitProducerIdResponse)


def apt_v3(tid, pid, epoch, topics):
    R = kpp.AddPartitionsToTxnRequest
    return R(v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid,
             v3_and_below_producer_epoch=epoch,
             v3_and_below_topics=[R.AddPartitionsToTxnTopic(name=t, partitions=ps)
                                  for t, ps in topics.items()])


def per_partition(topic_results):
    return {(t.name, p.partition_index): p.partition_error_code
            for t in topic_results for p in t.results_by_partition}


async def end(wire, tid, pid, epoch, commit, version):
    return await call(wire, kpp.EndTxnRequest(transactional_id=tid, producer_id=pid,
                                              producer_epoch=epoch, committed=commit),
                      version, kpp.EndTxnResponse)


@pytest.mark.parametrize("version", range(6))
async def test_init_producer_id_every_version(start_broker, version):
    _, wire = await connect(start_broker)
    first = await init(wire, "tx", version)
    assert first.error_code == E.NONE and first.producer_epoch == 0
    again = await init(wire, "tx", version)
    assert (again.producer_id, again.producer_epoch) == (first.producer_id, 1)
    too_long = await init(wire, "tx", version, timeout_ms=900_001)
    assert too_long.error_code == E.INVALID_TRANSACTION_TIMEOUT
    assert (await init(wire, "", version)).error_code == E.INVALID_REQUEST
    if version >= 3:
        stale = await init(wire, "tx", version, pid=first.producer_id, epoch=7)
        fenced = E.PRODUCER_FENCED if version >= 4 else E.INVALID_PRODUCER_EPOCH
        assert stale.error_code == fenced
        half = await init(wire, "tx", version, pid=-1, epoch=3)
        assert half.error_code == E.INVALID_REQUEST and half.producer_id == -1


@pytest.mark.parametrize("version", range(4))
async def test_add_partitions_client_form(start_broker, version):
    _, wire = await connect(start_broker)
    ip = await init(wire, "tx")
    pid = ip.producer_id
    ok = await call(wire, apt_v3("tx", pid, 0, {"t": [0, 1]}), version,
                    kpp.AddPartitionsToTxnResponse)
    assert per_partition(ok.results_by_topic_v3_and_below) == {("t", 0): 0, ("t", 1): 0}
    missing = await call(wire, apt_v3("tx", pid, 0, {"u": [0], "nope": [0], "t": [5]}), version,
                         kpp.AddPartitionsToTxnResponse)
    assert per_partition(missing.results_by_topic_v3_and_below) == {
        ("u", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("t", 5): E.UNKNOWN_TOPIC_OR_PARTITION}
    stale = await call(wire, apt_v3("tx", pid, 3, {"u": [0]}), version,
                       kpp.AddPartitionsToTxnResponse)
    fenced = E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH
    assert per_partition(stale.results_by_topic_v3_and_below) == {("u", 0): fenced}
    internal = await call(wire, apt_v3("tx", pid, 0, {"__consumer_offsets": [0], "u": [0]}),
                          version, kpp.AddPartitionsToTxnResponse)
    assert per_partition(internal.results_by_topic_v3_and_below) == {
        ("__consumer_offsets", 0): E.TOPIC_AUTHORIZATION_FAILED, ("u", 0): E.OPERATION_NOT_ATTEMPTED}
    unmapped = await call(wire, apt_v3("nobody", pid, 0, {"u": [0]}), version,
                          kpp.AddPartitionsToTxnResponse)
    assert per_partition(unmapped.results_by_topic_v3_and_below) == {
        ("u", 0): E.INVALID_PRODUCER_ID_MAPPING}


@pytest.mark.parametrize("version", [4, 5])
async def test_add_partitions_batched_and_verify_only(start_broker, version):
    bound, wire = await connect(start_broker)
    a, b = await init(wire, "a"), await init(wire, "b")
    R = kpp.AddPartitionsToTxnRequest

    def txn(tid, pid, verify, parts):
        return R.AddPartitionsToTxnTransaction(
            transactional_id=tid, producer_id=pid, producer_epoch=0, verify_only=verify,
            topics=[R.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in parts.items()])

    resp = await call(wire, R(transactions=[txn("a", a.producer_id, False, {"t": [0]}),
                                            txn("b", b.producer_id, True, {"t": [1]})]),
                      version, kpp.AddPartitionsToTxnResponse)
    assert resp.error_code == E.NONE
    got = {r.transactional_id: per_partition(r.topic_results) for r in resp.results_by_transaction}
    assert got == {"a": {("t", 0): E.NONE}, "b": {("t", 1): E.TRANSACTION_ABORTABLE}}
    verify = await call(wire, R(transactions=[txn("a", a.producer_id, True, {"t": [0, 1]})]),
                        version, kpp.AddPartitionsToTxnResponse)
    assert per_partition(verify.results_by_transaction[0].topic_results) == {
        ("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE}
    md = bound.broker.transactions.get("a")
    assert md.partitions == {("t", 0)}  # verifying added nothing


@pytest.mark.parametrize("version", range(5))
async def test_add_offsets_to_txn_every_version(start_broker, version):
    bound, wire = await connect(start_broker)
    pid = (await init(wire, "tx")).producer_id

    def req(epoch):
        return kpp.AddOffsetsToTxnRequest(transactional_id="tx", producer_id=pid,
                                          producer_epoch=epoch, group_id="grp")

    ok = await call(wire, req(0), version, kpp.AddOffsetsToTxnResponse)
    assert ok.error_code == E.NONE
    md = bound.broker.transactions.get("tx")
    partition = bound.broker.cluster.offsets_partition("grp")
    assert md.groups == {"grp"} and md.partitions == {("__consumer_offsets", partition)}
    stale = await call(wire, req(4), version, kpp.AddOffsetsToTxnResponse)
    assert stale.error_code == (E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH)


@pytest.mark.parametrize("version", range(6))
async def test_end_txn_every_version(start_broker, version):
    bound, wire = await connect(start_broker)
    pid = (await init(wire, "tx")).producer_id
    none = await end(wire, "tx", pid, 0, True, version)
    assert none.error_code == E.INVALID_TXN_STATE
    await call(wire, apt_v3("tx", pid, 0, {"t": [0]}), 3, kpp.AddPartitionsToTxnResponse)
    log = bound.broker.topics.partition("t", 0)
    before = log.log_end_offset
    done = await end(wire, "tx", pid, 0, True, version)
    assert done.error_code == E.NONE
    assert log.log_end_offset == before + 1  # the COMMIT marker
    md = bound.broker.transactions.get("tx")
    assert md.state.value == "CompleteCommit"
    if version >= 5:  # transactions v2: the epoch is bumped and returned
        assert (done.producer_id, done.producer_epoch) == (pid, 1)
        assert md.producer_epoch == 1
        stale = await end(wire, "tx", pid, 7, False, version)
    else:
        assert md.producer_epoch == 0
        stale = await end(wire, "tx", pid, 5, True, version)
    assert stale.error_code == (E.PRODUCER_FENCED if version >= 2 else E.INVALID_PRODUCER_EPOCH)


# the coordinator's own aborts follow the cluster's transaction.version: at 2 (the default) the
# fence's abort bumps the epoch twice (markers at 2), at 1 once (markers at 1)
TV_SETTINGS = [(None, 2), ({"emu.transaction.version": "1"}, 1)]


@pytest.mark.parametrize("settings, aborted_epoch", TV_SETTINGS)
async def test_second_producer_fences_and_aborts_the_first(start_broker, settings, aborted_epoch):
    bound, wire = await connect(start_broker, settings)
    pid = (await init(wire, "tx")).producer_id
    await call(wire, apt_v3("tx", pid, 0, {"t": [1]}), 3, kpp.AddPartitionsToTxnResponse)
    log = bound.broker.topics.partition("t", 1)
    before = log.log_end_offset
    busy = await init(wire, "tx")
    assert busy.error_code == E.CONCURRENT_TRANSACTIONS
    assert log.log_end_offset == before + 1  # the ABORT marker
    retry = await init(wire, "tx")
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (
        E.NONE, pid, aborted_epoch + 1)
    zombie = await end(wire, "tx", pid, 0, True, 3)
    assert zombie.error_code == E.PRODUCER_FENCED


async def test_describe_and_list_transactions(start_broker):
    bound, wire = await connect(start_broker)
    pid = (await init(wire, "tx", timeout_ms=30_000)).producer_id
    await init(wire, "idle")
    await call(wire, apt_v3("tx", pid, 0, {"t": [1, 0], "u": [0]}), 3,
               kpp.AddPartitionsToTxnResponse)
    desc = await call(wire, kpa.DescribeTransactionsRequest(transactional_ids=["tx", "zz", ""]),
                      0, kpa.DescribeTransactionsResponse)
    tx, zz, empty = desc.transaction_states
    assert (tx.error_code, tx.transaction_state, tx.producer_id, tx.producer_epoch,
            tx.transaction_timeout_ms) == (E.NONE, "Ongoing", pid, 0, 30_000)
    assert {t.topic: sorted(t.partitions) for t in tx.topics} == {"t": [0, 1], "u": [0]}
    assert tx.transaction_start_time_ms == bound.broker.transactions.get("tx").start_ms >= 0
    assert zz.error_code == E.TRANSACTIONAL_ID_NOT_FOUND and zz.transactional_id == "zz"
    assert empty.error_code == E.INVALID_REQUEST

    def listing(resp):
        return {(s.transactional_id, s.transaction_state) for s in resp.transaction_states}

    every = await call(wire, kpa.ListTransactionsRequest(state_filters=[], producer_id_filters=[]),
                       0, kpa.ListTransactionsResponse)
    assert listing(every) == {("tx", "Ongoing"), ("idle", "Empty")}
    ongoing = await call(wire, kpa.ListTransactionsRequest(
        state_filters=["Ongoing", "Bogus"], producer_id_filters=[]), 1,
        kpa.ListTransactionsResponse)
    assert listing(ongoing) == {("tx", "Ongoing")} and ongoing.unknown_state_filters == ["Bogus"]
    by_pid = await call(wire, kpa.ListTransactionsRequest(
        state_filters=[], producer_id_filters=[pid]), 0, kpa.ListTransactionsResponse)
    assert listing(by_pid) == {("tx", "Ongoing")}
    # v1's duration filter: nothing has run an hour yet (the idle id has no start: Kafka's
    # now - (-1) arithmetic lets it through, as here)
    long_ = await call(wire, kpa.ListTransactionsRequest(
        state_filters=["Ongoing"], producer_id_filters=[], duration_filter=3_600_000), 1,
        kpa.ListTransactionsResponse)
    assert listing(long_) == set()


async def test_list_transactions_v2_filters_by_a_whole_match_of_the_id_pattern(start_broker):
    bound, wire = await connect(start_broker)
    for tid in ("orders-1", "orders-2", "payments-1", "xorders-3"):
        await init(wire, tid)

    async def ids(pattern):
        resp = await call(wire, kpa.ListTransactionsRequest(
            state_filters=[], producer_id_filters=[], duration_filter=-1,
            transactional_id_pattern=pattern), 2, kpa.ListTransactionsResponse)
        return resp.error_code, sorted(s.transactional_id for s in resp.transaction_states)

    assert await ids("orders-.*") == (E.NONE, ["orders-1", "orders-2"])  # whole id, not a find
    assert await ids(".*-1") == (E.NONE, ["orders-1", "payments-1"])
    assert await ids(None) == (E.NONE, ["orders-1", "orders-2", "payments-1", "xorders-3"])
    assert await ids("") == (E.NONE, ["orders-1", "orders-2", "payments-1", "xorders-3"])
    assert await ids("orders-(") == (E.INVALID_REGULAR_EXPRESSION, [])
    # a pattern that backtracks for ever in a backtracking engine answers at once here
    assert await ids("(a*)*b") == (E.NONE, [])


@pytest.mark.parametrize("version", range(1, 7))
async def test_find_coordinator_for_a_transactional_id(start_broker, version):
    bound, wire = await connect(start_broker)
    from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
    if version >= 4:
        req = FindCoordinatorRequest(key_type=1, coordinator_keys=["tx"])
    else:
        req = FindCoordinatorRequest(key="tx", key_type=1)
    resp = await call(wire, req, version, FindCoordinatorResponse)
    entry = resp.coordinators[0] if version >= 4 else resp
    assert (entry.error_code, entry.node_id, entry.port) == (E.NONE, 1, bound.port)
    topic = bound.broker.topics.catalogue.get("__transaction_state")
    assert topic is not None and topic.is_internal and len(topic.partitions) == 50


@pytest.mark.parametrize("settings, aborted_epoch", TV_SETTINGS)
async def test_timed_out_transaction_is_aborted_and_fenced_on_the_broker_clock(
        start_broker, settings, aborted_epoch):
    bound, wire = await connect(start_broker, {"emu.clock": "manual", **(settings or {})})
    broker = bound.broker
    pid = (await init(wire, "tx", timeout_ms=1000)).producer_id
    await call(wire, apt_v3("tx", pid, 0, {"t": [0]}), 3, kpp.AddPartitionsToTxnResponse)
    log = broker.topics.partition("t", 0)
    before = log.log_end_offset
    from kafka_emu.control import timing
    timing.advance(broker, 5_000)  # timed out, but the periodic check has not run yet
    assert broker.transactions.get("tx").state.value == "Ongoing"
    timing.advance(broker, 5_000)  # the check at 10 s (transaction.abort...interval.ms)
    md = broker.transactions.get("tx")
    assert md.state.value == "CompleteAbort" and md.producer_epoch == aborted_epoch
    assert log.log_end_offset == before + 1
    # the ABORT marker carried that epoch to the partition's producer state
    assert log.producers.entry(pid).epoch == aborted_epoch
    late = await end(wire, "tx", pid, 0, True, 3)
    assert late.error_code == E.PRODUCER_FENCED


async def test_describe_producers_shows_the_open_transaction(start_broker):
    from tests.log.txn_frames import raw_batch
    bound, wire = await connect(start_broker)
    broker = bound.broker
    pid = (await init(wire, "tx")).producer_id
    await call(wire, apt_v3("tx", pid, 0, {"t": [0]}), 3, kpp.AddPartitionsToTxnResponse)
    log = broker.topics.partition("t", 0)
    log.append(raw_batch([b"x", b"y"], pid=pid, epoch=0, seq=0, transactional=True,
                         timestamp_ms=7_000), broker.now_ms())
    R = kpa.DescribeProducersRequest

    async def describe():
        resp = await call(wire, R(topics=[R.TopicRequest(name="t", partition_indexes=[0, 9]),
                                          R.TopicRequest(name="nope", partition_indexes=[0])]),
                          0, kpa.DescribeProducersResponse)
        return {(t.name, p.partition_index): p for t in resp.topics for p in t.partitions}

    got = await describe()
    (state,) = got[("t", 0)].active_producers
    assert (state.producer_id, state.producer_epoch, state.last_sequence, state.last_timestamp,
            state.current_txn_start_offset) == (pid, 0, 1, 7_000, 0)
    assert got[("t", 9)].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert got[("nope", 0)].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    await end(wire, "tx", pid, 0, True, 3)
    (state,) = (await describe())[("t", 0)].active_producers
    assert state.current_txn_start_offset == -1  # the commit marker closed it


async def test_every_ended_transaction_is_an_event_with_its_cause(start_broker):
    from kafka_emu.broker.events import TransactionEnded
    from kafka_emu.trace.schema import to_record
    seen = []
    bound, wire = await connect(start_broker, {"emu.clock": "manual"}, observer=seen.append)
    pid = (await init(wire, "tx", timeout_ms=1000)).producer_id
    for cause in ("client", "fenced", "timeout"):
        epoch = bound.broker.transactions.get("tx").producer_epoch
        await call(wire, apt_v3("tx", pid, epoch, {"t": [0], "u": [0]}), 3,
                   kpp.AddPartitionsToTxnResponse)
        if cause == "client":
            await end(wire, "tx", pid, epoch, True, 3)
        elif cause == "fenced":
            await init(wire, "tx", timeout_ms=1000)  # CONCURRENT_TRANSACTIONS, aborted
            await init(wire, "tx", timeout_ms=1000)
        else:
            from kafka_emu.control import timing
            timing.advance(bound.broker, 10_000)
    ended = [e for e in seen if isinstance(e, TransactionEnded)]
    assert [(e.cause, e.committed, e.partitions) for e in ended] == [
        ("client", True, (("t", 0), ("u", 0))), ("fenced", False, (("t", 0), ("u", 0))),
        ("timeout", False, (("t", 0), ("u", 0)))]
    # fenced at epoch 1, aborted at 2 (transaction.version 2, the default)
    assert ended[2].duration_ms == 10_000 and ended[1].producer_epoch == 2
    record = to_record(ended[0])
    assert record["kind"] == "transaction_ended"
    assert record["partitions"] == [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 0}]


async def test_transaction_configs_by_their_kafka_names(start_broker):
    bound, wire = await connect(start_broker, {
        "transaction.max.timeout.ms": "5000",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100",
        "transaction.state.log.num.partitions": "3", "emu.clock": "manual"})
    assert (await init(wire, "tx", timeout_ms=5001)).error_code == E.INVALID_TRANSACTION_TIMEOUT
    pid = (await init(wire, "tx", timeout_ms=200)).producer_id
    await call(wire, apt_v3("tx", pid, 0, {"t": [0]}), 3, kpp.AddPartitionsToTxnResponse)
    from kafka_emu.control import timing
    timing.advance(bound.broker, 300)  # timed out after 200 ms, found by the check at 300
    assert bound.broker.transactions.get("tx").state.value == "CompleteAbort"
    from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
    await call(wire, FindCoordinatorRequest(key="tx", key_type=1), 3, FindCoordinatorResponse)
    assert len(bound.broker.topics.catalogue.get("__transaction_state").partitions) == 3


@pytest.mark.parametrize("version", [1, 2])
async def test_write_txn_markers(start_broker, version):
    from tests.log.txn_frames import raw_batch
    bound, wire = await connect(start_broker)
    log = bound.broker.topics.partition("t", 0)
    log.append(raw_batch([b"x"], pid=77, epoch=3, seq=0, transactional=True),
               bound.broker.now_ms())
    R = kpp.WriteTxnMarkersRequest
    M = R.WritableTxnMarker

    def marker(epoch, parts):
        kw = dict(producer_id=77, producer_epoch=epoch, transaction_result=False,
                  coordinator_epoch=0,
                  topics=[M.WritableTxnMarkerTopic(name=t, partition_indexes=ps)
                          for t, ps in parts.items()])
        if version >= 2:
            kw["transaction_version"] = 1
        return M(**kw)

    async def write(epoch, parts):
        resp = await call(wire, R(markers=[marker(epoch, parts)]), version,
                          kpp.WriteTxnMarkersResponse)
        (result,) = resp.markers
        assert result.producer_id == 77
        return {(t.name, p.partition_index): p.error_code
                for t in result.topics for p in t.partitions}

    assert await write(2, {"t": [0]}) == {("t", 0): E.INVALID_PRODUCER_EPOCH}
    assert log.last_stable_offset == 0  # still open
    assert await write(3, {"t": [0, 7], "nope": [0]}) == {
        ("t", 0): E.NONE, ("t", 7): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert log.last_stable_offset == log.log_end_offset == 2  # aborted, marker written


async def test_idempotent_init_producer_id_checks_the_pair_too(start_broker):
    # KafkaApis checks (producer id, epoch) before the coordinator, with or without an id
    _, wire = await connect(start_broker)
    req = kpp.InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000,
                                    producer_id=5, producer_epoch=-1)
    half = await call(wire, req, 4, kpp.InitProducerIdResponse)
    assert (half.error_code, half.producer_id) == (E.INVALID_REQUEST, -1)
    req = kpp.InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000,
                                    producer_id=5, producer_epoch=0)
    fresh = await call(wire, req, 4, kpp.InitProducerIdResponse)
    assert fresh.error_code == E.NONE and fresh.producer_epoch == 0  # a new id, as Kafka
