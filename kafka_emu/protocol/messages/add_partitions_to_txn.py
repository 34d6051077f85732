"""AddPartitionsToTxn (24): valid 0-5, flexible 3+.

v1 as v0; v2 PRODUCER_FENCED; v3 flexible; v4 batches transactions and adds VerifyOnly (KIP-890
part 1) -- v4+ is the broker-to-broker form (a partition leader verifying or adding for a
producer), v0-3 the client's; v5 TRANSACTION_ABORTABLE. v4+ responses carry a top-level error.
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@struct
class AddPartitionsToTxnTopic:
    name: str = field(STRING, "0+")
    partitions: list = field(Array(INT32), "0+")


@struct
class AddPartitionsToTxnTransaction:
    transactional_id: str = field(STRING, "4+")
    producer_id: int = field(INT64, "4+")
    producer_epoch: int = field(INT16, "4+")
    verify_only: bool = field(BOOL, "4+", default=False)
    topics: list = field(Array(AddPartitionsToTxnTopic), "4+")


@message(api_key=24, kind="request", valid="0-5", flexible="3+")
class AddPartitionsToTxnRequest:
    transactions: list = field(Array(AddPartitionsToTxnTransaction), "4+")
    v3_and_below_transactional_id: str = field(STRING, "0-3")
    v3_and_below_producer_id: int = field(INT64, "0-3")
    v3_and_below_producer_epoch: int = field(INT16, "0-3")
    v3_and_below_topics: list = field(Array(AddPartitionsToTxnTopic), "0-3")


@struct
class AddPartitionsToTxnPartitionResult:
    partition_index: int = field(INT32, "0+")
    # Kafka's PartitionErrorCode, named as every entry's error here, so the one error-response
    # builder (broker/error_response.py) finds it
    error_code: int = field(INT16, "0+")


@struct
class AddPartitionsToTxnTopicResult:
    name: str = field(STRING, "0+")
    results_by_partition: list = field(Array(AddPartitionsToTxnPartitionResult), "0+")


@struct
class AddPartitionsToTxnResult:
    transactional_id: str = field(STRING, "4+")
    topic_results: list = field(Array(AddPartitionsToTxnTopicResult), "4+")


@message(api_key=24, kind="response", valid="0-5", flexible="3+")
class AddPartitionsToTxnResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "4+", ignorable=True)
    results_by_transaction: list = field(Array(AddPartitionsToTxnResult), "4+")
    results_by_topic_v3_and_below: list = field(Array(AddPartitionsToTxnTopicResult), "0-3")


API = Api(24, "AddPartitionsToTxn", AddPartitionsToTxnRequest, AddPartitionsToTxnResponse)
