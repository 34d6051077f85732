"""WriteTxnMarkers (27): valid 1-2, flexible 1+.

The transaction coordinator's request to partition leaders (and the admin client's, to abort a
hanging transaction: kafka-transactions.sh abort). Kafka 4.0 removed v0 (KIP-896); v2 adds
TransactionVersion (0/1 legacy, 2 transactions v2).
"""

from ..schema import BOOL, INT8, INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class WritableTxnMarkerTopic:
    name: str = field(STRING, "0+")
    partition_indexes: list = field(Array(INT32), "0+")


@struct
class WritableTxnMarker:
    producer_id: int = field(INT64, "0+")
    producer_epoch: int = field(INT16, "0+")
    transaction_result: bool = field(BOOL, "0+")
    topics: list = field(Array(WritableTxnMarkerTopic), "0+")
    coordinator_epoch: int = field(INT32, "0+")
    transaction_version: int = field(INT8, "2+", default=0, ignorable=True)


@message(api_key=27, kind="request", valid="1-2", flexible="1+")
class WriteTxnMarkersRequest:
    markers: list = field(Array(WritableTxnMarker), "0+")


@struct
class WritableTxnMarkerPartitionResult:
    partition_index: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")


@struct
class WritableTxnMarkerTopicResult:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(WritableTxnMarkerPartitionResult), "0+")


@struct
class WritableTxnMarkerResult:
    producer_id: int = field(INT64, "0+")
    topics: list = field(Array(WritableTxnMarkerTopicResult), "0+")


@message(api_key=27, kind="response", valid="1-2", flexible="1+")
class WriteTxnMarkersResponse:
    markers: list = field(Array(WritableTxnMarkerResult), "0+")


API = Api(27, "WriteTxnMarkers", WriteTxnMarkersRequest, WriteTxnMarkersResponse)
