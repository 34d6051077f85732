"""kafka-python 3 recognises kafka-emu as the newest Kafka release it knows (#34 item 7).

kafka-python infers a broker's release from the ApiVersions it serves
(``kafka.protocol.broker_version_data.infer_broker_version_from_api_versions``: DescribeLogDirs
v5 means 4.3, ListOffsets v11 4.2, Produce v13 4.1). The checks below go through the real client
over TCP, then compare every range the emulator advertises for the APIs it serves with the table
kafka-python keeps for that release.
"""

from __future__ import annotations

from kafka import KafkaAdminClient
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

from kafka_emu.broker.handlers._index import INDEX as SERVED

REFERENCE = (4, 3)

# Keys kafka-emu serves at another range than the reference release, each for a reason the
# differences page lists (docs/explanation/differences-from-kafka.md, "API versions"); the range
# test below must not silently accept any other difference.
OWN_RANGES: dict[int, tuple[int, int]] = {}


def test_kafka_python_calls_the_emulator_the_reference_release(kafka_emu_factory):
    emu = kafka_emu_factory()
    admin = KafkaAdminClient(bootstrap_servers=emu.bootstrap_servers, request_timeout_ms=30000)
    try:
        assert admin._manager.broker_version == REFERENCE
    finally:
        admin.close()


def test_every_served_range_is_the_reference_release_range():
    reference = BROKER_API_VERSIONS[REFERENCE]
    differences = {}
    for key, (_module, served) in SERVED.items():
        low, _, high = served.partition("-")
        ours = (int(low), int(high or low))
        if key == 0:  # Produce: listed from v0 in ApiVersions (KAFKA-18659), served from v3
            ours = (0, ours[1])
        if reference.get(key) != ours and OWN_RANGES.get(key) != ours:
            differences[key] = (ours, reference.get(key))
    assert differences == {}
