"""Log retention: Kafka's periodic ``kafka-log-retention`` task, on the coordinator's clock.

Theory of operation. Kafka's LogManager runs ``cleanupLogs`` first ``log.initial.task.delay.ms``
(30 s) after start, then every ``log.retention.check.interval.ms`` (5 min) at a fixed rate; each
run deletes, in every log whose ``cleanup.policy`` includes delete, the oldest segments that
breach ``retention.ms`` or ``retention.bytes`` (``PartitionLog.delete_old_batches``, where each
stored batch stands for a segment). Nothing is deleted between runs, so a record may outlive
its retention by up to one interval, as on Kafka.

The runs are deadlines on the emulator's clock (``broker/clock.py``), the one the group timers
use: the broker's timer task sleeps until the earlier of the coordinator's next deadline and
``next_check_ms``, and the control plane's ``advance`` fires them too -- so moving time by
``retention.ms`` plus an interval deletes what Kafka would have deleted by then. A jump over
several scheduled runs does one run at the last of them: what retention deletes only grows
with time (appends cannot happen inside a jump), so the earlier runs would change nothing it
does not. With a manual clock the runs happen only when time is advanced.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs

from ..frozen import lazy_dunders

log = logging.getLogger("kafka_emu")


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(kw_only=True, repr=False, eq=False)
class Trimmed:
    """One partition whose oldest batches a retention run deleted."""

    topic: str
    partition: int
    batches: int
    log_start_offset: int


class LogRetention:
    def __init__(self, topics: Any, *, start_ms: int, initial_delay_ms: int,
                 interval_ms: int) -> None:
        self.topics = topics  # broker/topics.py's façade
        self.interval_ms = interval_ms
        self.next_check_ms = start_ms + initial_delay_ms

    def run_due(self, now_ms: int) -> list[Trimmed]:
        """Run the check if one was due by ``now_ms`` (at the latest scheduled time passed)."""
        if now_ms < self.next_check_ms:
            return []
        missed = (now_ms - self.next_check_ms) // self.interval_ms
        at = self.next_check_ms + missed * self.interval_ms
        self.next_check_ms = at + self.interval_ms
        return self.check(at)

    def check(self, now_ms: int) -> list[Trimmed]:
        """One retention run over every partition of every topic, at ``now_ms``."""
        trimmed: list[Trimmed] = []
        # the catalogue is made on first use (Topics.__getattr__): none yet, no log to trim
        catalogue = vars(self.topics).get("catalogue")
        for topic in catalogue or ():
            for index, partition in enumerate(topic.partitions):
                deleted = partition.delete_old_batches(now_ms)
                if deleted:
                    trimmed.append(Trimmed(topic=topic.name, partition=index, batches=deleted,
                                           log_start_offset=partition.log_start_offset))
        if trimmed:
            log.debug("log retention deleted %d batches in %d partitions",
                      sum(t.batches for t in trimmed), len(trimmed))
        return trimmed
