import pytest

from kafka_emu.testing import make_config
from kafka_emu.broker.server import serve


@pytest.fixture
def start_broker(nursery):
    """start_broker(settings, topics=...) -> BoundAddress of a broker on 127.0.0.1 port 0."""

    async def start(settings=None, *, topics=None, observer=None):
        from functools import partial
        return await nursery.start(partial(serve, make_config(settings, topics=topics),
                                           observer=observer))

    return start
