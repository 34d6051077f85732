import pytest

from fake_broker import FakeBroker


@pytest.fixture
def fake():
    """fake(versions=None, handlers=None, **kw) -> a started FakeBroker, stopped (and checked
    for client misbehaviour) at teardown."""
    started = []

    def start(versions=None, handlers=None, **kw):
        broker = FakeBroker(versions, handlers, **kw).start()
        started.append(broker)
        return broker

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
def closed_port():
    """A port on 127.0.0.1 that nothing listens on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
