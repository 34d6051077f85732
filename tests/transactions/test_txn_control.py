"""The control plane's transaction operations: list, abort, expire now -- each answer checked
against the JSON Schema the OpenAPI document derives from its declared result."""

from __future__ import annotations

import jsonschema
import pytest

from kafka_emu.control.openapi import result_schema
from kafka_emu.errors import ErrorCode as E
from kafka_emu.control.operations import ControlError, all_operations, parse_params

from .test_txn_wire import apt_v3, call, connect, end, init, kpp


def run(broker, name, **raw):
    op = all_operations()[name]
    answer = op.run(broker, parse_params(op, raw))
    components: dict = {}
    schema = result_schema(op.result, components)
    jsonschema.validate(answer, {**schema, "components": {"schemas": components}})
    return answer


# the control plane's abort and expire are ends the coordinator starts itself: at the cluster's
# transaction.version 2 (the default, Kafka 4.x's) the fenced epoch 1 is bumped again to 2
@pytest.mark.parametrize("settings, epoch", [(None, 2), ({"emu.transaction.version": "1"}, 1)])
async def test_list_abort_and_expire(start_broker, settings, epoch):
    bound, wire = await connect(start_broker, settings)
    broker = bound.broker
    a = (await init(wire, "a")).producer_id
    b = (await init(wire, "b")).producer_id
    await init(wire, "idle")
    for tid, pid in (("a", a), ("b", b)):
        await call(wire, apt_v3(tid, pid, 0, {"t": [0]}), 3, kpp.AddPartitionsToTxnResponse)
    listed = run(broker, "transactions")
    assert [(t["transactional_id"], t["state"]) for t in listed] == [
        ("a", "Ongoing"), ("b", "Ongoing"), ("idle", "Empty")]
    assert listed[0]["partitions"] == ["t-0"] and listed[0]["start_ms"] >= 0
    assert [t["transactional_id"] for t in run(broker, "transactions", state="Ongoing")] == ["a", "b"]

    log = broker.topics.partition("t", 0)
    before = log.log_end_offset
    aborted = run(broker, "abort_transaction", transactional_id="a")
    assert aborted == {"transactional_id": "a", "aborted": True, "state": "CompleteAbort",
                       "producer_epoch": epoch, "partitions": ["t-0"], "detail": ""}
    expired = run(broker, "expire_transaction", transactional_id="b")
    assert expired["aborted"] and expired["producer_epoch"] == epoch
    assert log.log_end_offset == before + 2  # two ABORT markers
    causes = {t["transactional_id"]: t["last_abort_cause"] for t in run(broker, "transactions")}
    assert causes == {"a": "operator", "b": "timeout", "idle": None}
    # the producers are fenced
    assert (await end(wire, "a", a, 0, True, 3)).error_code == E.PRODUCER_FENCED
    again = run(broker, "abort_transaction", transactional_id="a")
    assert not again["aborted"] and "CompleteAbort" in again["detail"]
    with pytest.raises(ControlError) as missing:
        run(broker, "abort_transaction", transactional_id="nobody")
    assert missing.value.status == 404
