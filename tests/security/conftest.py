import pytest

from kafka_emu.testing import make_config
from kafka_emu.broker.server import serve

ACLS_ON = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}


@pytest.fixture
def start_broker(nursery):
    """start_broker(settings) -> BoundAddress of a broker on 127.0.0.1 port 0 in this test."""

    async def start(settings=None, *, topics=None, observer=None):
        from functools import partial
        config = make_config(settings, topics=topics)
        return await nursery.start(partial(serve, config, observer=observer))

    return start
