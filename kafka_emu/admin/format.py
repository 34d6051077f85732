"""Text for the admin commands: plain left-aligned tables, shaped like Kafka's own tools.

Pure functions from values (``model``) to lines; nothing here knows sockets or versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .model import ApiRow, GroupDescription, GroupListing, MemberDescription
from .offsets import PartitionOffsets

NONE = "-"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *,
          right: Iterable[int] = ()) -> list[str]:
    """Columns padded to their widest cell, two spaces apart, no trailing blanks."""
    cells = [[str(h) for h in headers]] + [[NONE if c is None else str(c) for c in r]
                                            for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    right = set(right)
    lines = []
    for row in cells:
        parts = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(parts).rstrip())
    return lines


def group_ids(listings: Iterable[GroupListing]) -> list[str]:
    return [g.group_id for g in listings]


def group_states(listings: Iterable[GroupListing]) -> list[str]:
    """KIP-518's ``--list --state`` table."""
    return table(["GROUP", "STATE"], [(g.group_id, g.state or "Unknown") for g in listings])


def assignment(member: MemberDescription) -> str:
    """``topic(0,1),other(2)`` as kafka-consumer-groups.sh prints it; ``-`` when unknown."""
    if not member.assignment:
        return NONE
    return ",".join(f"{topic}({','.join(map(str, parts))})" for topic, parts in member.assignment)


def description(group: GroupDescription,
                offsets: Sequence[PartitionOffsets] | None = None) -> list[str]:
    lines = [f"GROUP:          {group.group_id}",
             f"STATE:          {group.state}",
             f"PROTOCOL-TYPE:  {group.protocol_type or NONE}",
             f"PROTOCOL:       {group.protocol or NONE}",
             ""]
    if offsets:
        lines += offset_table(group.group_id, offsets) + [""]
    if not group.members:
        lines.append(f"Consumer group '{group.group_id}' has no active members.")
        return lines
    rows = [(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.partition_count,
             assignment(m)) for m in sorted(group.members, key=lambda m: m.member_id)]
    lines += table(["MEMBER-ID", "GROUP-INSTANCE-ID", "CLIENT-ID", "HOST", "#PARTITIONS",
                    "ASSIGNMENT"], rows)
    return lines


def offset_table(group_id: str, offsets: Sequence[PartitionOffsets]) -> list[str]:
    """kafka-consumer-groups.sh --describe's table: offsets and lag per partition."""
    rows = [(group_id, o.topic, o.partition, o.committed, o.log_end, o.lag,
             o.member.member_id if o.member else None, o.member.client_host if o.member else None,
             o.member.client_id if o.member else None) for o in offsets]
    return table(["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"], rows)


def versions(address: str, api_versions_version: int, rows: Sequence[ApiRow]) -> list[str]:
    """KIP-35's view: each API either side knows, both ranges and the version they would use."""
    usable = sum(1 for r in rows if r.usable is not None)
    advertised = sum(1 for r in rows if r.broker is not None)
    lines = [f"Broker {address} (ApiVersions v{api_versions_version}): {advertised} APIs "
             f"advertised, {usable} usable by kafka-emu", ""]
    lines += table(
        ["API", "KEY", "BROKER", "KAFKA-EMU", "USABLE"],
        [(r.name or "UNKNOWN", r.key, r.broker if r.broker is not None else NONE,
          r.ours if r.ours is not None else NONE,
          r.usable if r.usable is not None else "unusable") for r in rows],
        right=[1])
    missing = [r.name for r in rows if r.broker is None and r.name is not None]
    if missing:
        lines += ["", f"Known to kafka-emu but not advertised by the broker: {', '.join(missing)}"]
    return lines
