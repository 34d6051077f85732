"""``make_config``: a BrokerConfig from Kafka's config names, for the runners and fixtures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..broker.config import BrokerConfig

__all__ = ["make_config"]


def make_config(settings: Mapping[str, Any] | None = None, *, topics: Mapping[str, int] | None = None,
                host: str = "127.0.0.1", port: int = 0, clock: str | None = None,
                brokers: int = 1, racks: tuple[str | None, ...] = ()) -> BrokerConfig:
    """A BrokerConfig from Kafka config names, e.g. {"group.initial.rebalance.delay.ms": 3000};
    ``clock="manual"`` makes the coordinator's time move only when told (``emu.advance``).
    ``brokers=3`` makes a cluster of three brokers in one process (node ids 1-3, each on its own
    free port; ``racks`` gives each its rack)."""
    settings = {k: str(v) for k, v in (settings or {}).items()}
    if clock is not None:
        settings["emu.clock"] = clock
    extra: dict[str, Any] = {"brokers": brokers} if brokers != 1 else {}
    if racks:
        extra["racks"] = tuple(racks)
    return BrokerConfig.from_kafka(settings, host=host, port=port,
                                   topics=tuple((topics or {}).items()), **extra)
