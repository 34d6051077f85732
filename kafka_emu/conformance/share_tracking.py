"""What share consumers saw, and the share-group verdicts (KIP-932).

Theory of operation. Kafka's ``VerifiableShareConsumer`` prints ``records_consumed`` (offsets
per partition) and ``offsets_acknowledged`` (what the broker confirmed, from the
acknowledgement commit callback); its service (``verifiable_share_consumer.py``) counts, per
node and overall, records consumed, acknowledged successfully and the distinct offsets
consumed. :class:`ShareTracker` keeps those counts from the kit's :class:`RunLog`, the way the
consumer ``Tracker`` keeps a consumer group's (there is no assignment to follow: every member
of a share group may read every partition).

The client can only say what it received. Whether a record was ever held by two consumers at
once, and whether delivery counts add up, is the broker's to say: :func:`server_rules` replays
the emulator's ``ShareRecordsChanged`` events (acquire, acknowledge, release, lock_expired,
archive per run of offsets) for one group, offset by offset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .record import TP, Entry, Violation

ACCEPT, REJECT = 1, 3  # ShareAcknowledge's acknowledge types (0 gap, 2 release)

RULES = {
    "share-not-consumed": "a record produced was never consumed, as the consumers report it",
    "share-not-accepted": "a record produced was never accepted on the broker",
    "share-double-acquire": "a record was acquired while another member held it",
    "share-delivery-count": "an acquisition's delivery count is not one more than the count "
                            "the record was last released with",
    "share-ack-by-non-holder": "a record was acknowledged by a member that did not hold it",
    "share-archived": "a record was archived (lost to the consumers) in a run without rejects",
    "share-start-offset": "a share-partition's start offset is not at the log end at the finish",
    "share-acknowledged-count": "without failures, the records acknowledged (as the consumers "
                                "report) differ from those produced",
    "share-no-leader-move": "a broker-bounce scenario ended with a partition whose leader "
                            "never moved (it did not test what it claims)",
    "share-idle-consumer": "a consumer consumed or acknowledged nothing where each must work",
}


@attrs.define
class ShareNode:
    name: str
    life: int = 0
    alive: bool = False
    consumed: int = 0
    acknowledged: int = 0  # records whose acknowledgement the broker confirmed
    failed_acks: int = 0


class ShareTracker:
    """Per node and overall counts from the share consumers' events (Kafka's
    ShareConsumerEventHandler and the service's totals)."""

    def __init__(self) -> None:
        self.nodes: dict[str, ShareNode] = {}
        self.violations: list[Violation] = []
        self.consumed: dict[TP, set[int]] = defaultdict(set)
        self.acked: dict[TP, set[int]] = defaultdict(set)
        self.total_consumed = 0
        self.total_acked = 0

    def node(self, name: str) -> ShareNode:
        return self.nodes.setdefault(name, ShareNode(name))

    def feed(self, entries: Iterable[Entry]) -> None:
        for e in entries:
            n = self.node(e.node) if e.node != "kit" else None
            if n is None:
                continue
            if e.name == "kit_started":
                n.life, n.alive = e.life, True
            elif e.name in ("kit_exited", "kit_killed"):
                n.alive = n.alive and e.life != n.life
            elif e.name == "records_consumed":
                for part in e.event.get("partitions", ()):
                    offsets = part.get("offsets") or ()
                    self.consumed[(part["topic"], part["partition"])].update(offsets)
                    n.consumed += len(offsets)
                    self.total_consumed += len(offsets)
            elif e.name == "offsets_acknowledged":
                count = sum(len(p.get("offsets") or ()) for p in e.event.get("partitions", ()))
                if e.event.get("success", False):
                    for part in e.event.get("partitions", ()):
                        self.acked[(part["topic"], part["partition"])].update(part["offsets"])
                    n.acknowledged += count
                    self.total_acked += count
                else:
                    n.failed_acks += count

    def unique_consumed(self) -> int:
        return sum(len(s) for s in self.consumed.values())


def _missing(have: set[int], end: int) -> list[int]:
    return [o for o in range(end) if o not in have]


def _ranges(offsets: list[int]) -> str:
    out, start = [], None
    for i, o in enumerate(offsets):
        if start is None:
            start = o
        if i + 1 == len(offsets) or offsets[i + 1] != o + 1:
            out.append(f"{start}" if start == o else f"{start}-{o}")
            start = None
    return ",".join(out[:8]) + (" ..." if len(out) > 8 else "")


def all_consumed(tracker: ShareTracker, ends: Mapping[TP, int]) -> list[Violation]:
    """Every record produced was consumed at least once, as the consumers report it (Kafka:
    total_unique_consumed >= producer.num_acked, here offset by offset). Acceptance is the
    broker's to say (:func:`server_rules`): a consumer killed right after its acknowledgement
    went out never prints the callback's event."""
    out = []
    for tp, end in sorted(ends.items()):
        missing = _missing(tracker.consumed.get(tp, set()), end)
        if missing:
            out.append(Violation("share-not-consumed", f"{tp[0]}-{tp[1]}: offsets "
                                 f"{_ranges(missing)} produced but never consumed "
                                 f"({len(missing)} of {end})"))
    return out


def server_rules(events: Iterable[Mapping[str, Any]], *, group_id: str,
                 ends: Mapping[TP, int]) -> list[Violation]:
    """The broker's side, from ShareRecordsChanged: no record acquired while another member
    holds it; each acquisition's delivery count one more than the last; every record
    produced accepted at least once; none archived (lost) in a run without rejects."""
    holder: dict[tuple[TP, int], str] = {}
    deliveries: dict[tuple[TP, int], int] = defaultdict(int)
    accepted: dict[TP, set[int]] = defaultdict(set)
    out: list[Violation] = []
    for e in events:
        if e.get("type") != "ShareRecordsChanged" or e.get("group_id") != group_id:
            continue
        tp: TP = (e["topic"], e["partition"])
        action, member = e["action"], e.get("member_id") or ""
        for offset in range(e["first_offset"], e["last_offset"] + 1):
            key = (tp, offset)
            if action == "acquire":
                if key in holder and len(out) < 50:
                    out.append(Violation("share-double-acquire", f"{tp[0]}-{tp[1]}@{offset} "
                                         f"acquired by {member} at {e['at_ms']} while "
                                         f"{holder[key]} held it"))
                holder[key] = member
                deliveries[key] += 1
                if e["delivery_count"] != deliveries[key] and len(out) < 50:
                    out.append(Violation("share-delivery-count", f"{tp[0]}-{tp[1]}@{offset} "
                                         f"acquired with delivery count {e['delivery_count']} "
                                         f"at its delivery #{deliveries[key]}"))
            elif action == "acknowledge":
                if holder.get(key) != member and len(out) < 50:
                    out.append(Violation("share-ack-by-non-holder", f"{tp[0]}-{tp[1]}@{offset} "
                                         f"acknowledged by {member}, held by "
                                         f"{holder.get(key) or 'nobody'}"))
                holder.pop(key, None)
                if e.get("ack_type") == ACCEPT:
                    accepted[tp].add(offset)
            elif action in ("release", "lock_expired"):
                holder.pop(key, None)
                # the count it goes back with: the same, or one less when a new leader
                # reloaded it (an acquisition is never written to the share-group state)
                deliveries[key] = e["delivery_count"]
            elif action == "archive":
                holder.pop(key, None)
                if len(out) < 50:
                    out.append(Violation("share-archived", f"{tp[0]}-{tp[1]}@{offset} archived "
                                         f"at delivery count {e['delivery_count']} (lost to "
                                         f"the consumers: nothing here rejects)"))
    for tp, end in sorted(ends.items()):
        missing = _missing(accepted.get(tp, set()), end)
        if missing:
            out.append(Violation("share-not-accepted", f"{tp[0]}-{tp[1]}: offsets "
                                 f"{_ranges(missing)} never accepted on the broker"))
    return out
