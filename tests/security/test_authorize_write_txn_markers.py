"""WriteTxnMarkers needs CLUSTER_ACTION on the cluster, as Kafka's KafkaApis
handleWriteTxnMarkersRequest checks it: denied, every partition of every marker is answered
CLUSTER_AUTHORIZATION_FAILED and no marker reaches the log; allowed, the marker is written."""

from __future__ import annotations

from kafka_emu.errors import ErrorCode as E
from kafka_emu.protocol import BY_NAME
from kafka_emu.protocol.messages import write_txn_markers as w
from kafka_emu.security.acls import AclBinding, AclOperation as Op, ResourceType as RT
from kafka_emu.testing.wire import WireClient

from .conftest import ACLS_ON


def markers() -> w.WriteTxnMarkersRequest:
    return w.WriteTxnMarkersRequest(markers=[w.WritableTxnMarker(
        producer_id=7, producer_epoch=0, transaction_result=False, coordinator_epoch=0,
        topics=[w.WritableTxnMarkerTopic(name="t", partition_indexes=[0, 1])])])


def codes(response) -> list[tuple[str, int, int]]:
    return [(t.name, p.partition_index, p.error_code)
            for m in response.markers for t in m.topics for p in t.partitions]


async def test_write_txn_markers_needs_cluster_action(start_broker):
    bound = await start_broker(ACLS_ON, topics={"t": 2})
    broker = bound.broker
    wire = await WireClient.connect(bound.host, bound.port)
    api = BY_NAME["WriteTxnMarkers"]
    for version in (1, 2):
        denied = await wire.request(api, version, markers())
        assert codes(denied) == [("t", 0, E.CLUSTER_AUTHORIZATION_FAILED),
                                 ("t", 1, E.CLUSTER_AUTHORIZATION_FAILED)]
    assert broker.topics.partition("t", 0).high_watermark == 0  # no marker written
    # READ/WRITE/ALTER on the cluster are not CLUSTER_ACTION
    for op in (Op.ALTER, Op.WRITE):
        broker.authorizer.add(AclBinding(
            resource_type=RT.CLUSTER, resource_name="kafka-cluster", pattern_type=3,
            principal="User:ANONYMOUS", host="*", operation=op, permission=3))
    still = await wire.request(api, 1, markers())
    assert {c for _, _, c in codes(still)} == {E.CLUSTER_AUTHORIZATION_FAILED}
    broker.authorizer.add(AclBinding(
        resource_type=RT.CLUSTER, resource_name="kafka-cluster", pattern_type=3,
        principal="User:ANONYMOUS", host="*", operation=Op.CLUSTER_ACTION, permission=3))
    allowed = await wire.request(api, 1, markers())
    assert codes(allowed) == [("t", 0, 0), ("t", 1, 0)]
    assert broker.topics.partition("t", 0).high_watermark == 1  # the abort marker
