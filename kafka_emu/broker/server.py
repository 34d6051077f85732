"""``serve(config, task_status=...)``: the trio server.

One task per connection, one timer task that sleeps until the coordinator's next deadline.
Start it with ``address = await nursery.start(serve, config)``; port 0 picks a free port, and
the bound (host, port) is reported once the listener accepts connections.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import attrs
import trio

from .config import BrokerConfig
from .connection import serve_connection
from .state import Broker

log = logging.getLogger("kafka_emu")


@attrs.frozen
class BoundAddress:
    host: str
    port: int
    broker: Broker = attrs.field(eq=False, repr=False)

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"


async def serve(config: BrokerConfig, *, observer: Callable[[Any], None] | None = None,
                task_status=trio.TASK_STATUS_IGNORED) -> None:
    broker = Broker(config, observer=observer)
    listeners = await trio.open_tcp_listeners(config.port, host=config.host)
    sockname = listeners[0].socket.getsockname()
    broker.bound_host, broker.bound_port = config.host, sockname[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(broker.run_timers)
        await nursery.start(partial(trio.serve_listeners, partial(serve_connection, broker),
                                    listeners))
        log.info("kafka-emu listening on %s:%s", config.host, broker.bound_port)
        task_status.started(BoundAddress(config.host, broker.bound_port, broker))
