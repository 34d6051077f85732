"""The rules read from the emulator's timeline, and when the emulator saw each client leave.

``server_rules``: the protocol rules only the broker can see (see its docstring).
``departures``: when the coordinator removed each client's members (LeaveGroup, session expiry,
replacement...), in wall-clock milliseconds: a consumer's ownership of its partitions ends
there, however long its process takes afterwards to print ``shutdown_complete`` (a member that
sent LeaveGroup has been rebalanced away from at once; counting it as an owner until its last
line made false "overlapping assignment" failures of a few ms).

The consumer protocol (KIP-848) has no generations, JoinGroup or SyncGroup: its rules read the
coordinator's consumer-group events instead (``consumer_group_rules``): each target assignment
(``TargetAssignmentComputed``, an epoch's) and what each member owns as it reconciles
(``MemberReconciled``: assigned plus pending revocation), and a member told FENCED_MEMBER_EPOCH
or UNKNOWN_MEMBER_ID must heartbeat (rejoin at epoch 0) before it commits again.

Timeline times are the coordinator's clock, which the kit moves forward to expire sessions
(``TimeAdvanced``); a wall-clock time is the event's ``at_ms`` less every advance before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ErrorCode
from .record import TP, Violation, _fmt

# -- server side -----------------------------------------------------------------------------

_TOLD_GONE = {int(ErrorCode.ILLEGAL_GENERATION), int(ErrorCode.UNKNOWN_MEMBER_ID),
              # the consumer protocol's: the member must rejoin with member epoch 0
              int(ErrorCode.FENCED_MEMBER_EPOCH)}
_CGH = "ConsumerGroupHeartbeat"
_FENCED = int(ErrorCode.FENCED_INSTANCE_ID)
_STALE_APIS = {"OffsetCommit", "Heartbeat"}
_GROUP_APIS = {"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup"}
# A request that reached the broker less than this after the answer that told the member may
# have been sent before that answer arrived (pipelined); it is not held against the client.
IN_FLIGHT_GRACE_MS = 20.0
# The timeline event types the server-side rules read (``Emulator.timeline(types=...)``).
SERVER_EVENT_TYPES = ("RequestHandled", "FaultFired", "MemberAdded", "MemberRemoved",
                      "AssignmentsDistributed", "ConnectionClosed", "TimeAdvanced",
                      "TargetAssignmentComputed", "MemberReconciled")


def _arrival(e: Mapping[str, Any]) -> float:
    """When a request reached the broker, on the coordinator's clock (answered at ``at_ms``)."""
    return float(e.get("at_ms", 0)) - float(e.get("latency_ms") or 0.0)


def server_rules(events: Sequence[Mapping[str, Any]], *, group_id: str,
                 partitions: Sequence[TP] = (),
                 node_of_client: Mapping[str, str] | None = None) -> list[Violation]:
    """Protocol rules read from the emulator's timeline (``Emulator.timeline()`` entries: dicts
    with ``seq``, ``type`` and the event's fields), for one group:

    - every generation's assignments (the leader's SyncGroup, decoded) are disjoint and cover
      ``partitions`` (a cooperative generation may withhold partitions being moved);
    - a member told ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID (by the coordinator or a fault) does
      not commit or heartbeat with that generation / member id again before rejoining; on the
      consumer protocol, a member told FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID on its
      ConsumerGroupHeartbeat does not commit before its next heartbeat (the rejoin);
    - the consumer protocol's target assignments and owned partitions
      (:func:`consumer_group_rules`);
    - no group request carries a member id after it was answered FENCED_INSTANCE_ID;
    - no member of a client that still has a connection open is removed for not rejoining
      within the rebalance timeout (a killed client's connections are closed first).
    """
    node_of_client = node_of_client or {}
    out: list[Violation] = []
    told: dict[str, tuple[int | None, float, str]] = {}  # member -> (generation, when, error)
    fenced: dict[str, float] = {}
    client_of_member: dict[str, str] = {}
    client_of_connection: dict[int, str] = {}
    open_connections: dict[str, set[int]] = {}
    want = set(partitions)

    def node(client: str | None) -> str | None:
        return node_of_client.get(client or "", client)

    for e in sorted(events, key=lambda e: e.get("seq", 0)):
        kind = e.get("type")
        if kind == "ConnectionClosed":
            client = client_of_connection.pop(e["connection_id"], None)
            if client is not None:
                open_connections.get(client, set()).discard(e["connection_id"])
            continue
        if kind == "RequestHandled" and e.get("client_id") is not None:
            client_of_connection[e["connection_id"]] = e["client_id"]
            open_connections.setdefault(e["client_id"], set()).add(e["connection_id"])
        if e.get("group_id") != group_id:
            continue
        if kind == "MemberAdded":
            client_of_member[e["member_id"]] = e.get("client_id")
        elif kind == "AssignmentsDistributed" and e.get("decoded_assignments") is not None:
            out += _generation_assignment(e, want)
        elif kind == "FaultFired" and e.get("member_id") and e.get("error_code") in _TOLD_GONE:
            told[e["member_id"]] = (None, float(e["at_ms"]), ErrorCode(e["error_code"]).name)
        elif kind == "RequestHandled" and e.get("member_id"):
            member, arrival, api = e["member_id"], _arrival(e), e["api"]
            if member in fenced and api in _GROUP_APIS and arrival > fenced[member] \
                    + IN_FLIGHT_GRACE_MS:
                out.append(Violation("request-after-fencing",
                                     f"{api} from member {member} after it was fenced",
                                     node(e.get("client_id"))))
                fenced[member] = float("inf")  # one report per member
            if api in _STALE_APIS and member in told:
                generation, when, error = told[member]
                if arrival > when + IN_FLIGHT_GRACE_MS and \
                        (generation is None or e.get("generation_id") == generation):
                    out.append(Violation(
                        "stale-generation-after-told",
                        f"{api} with generation {e.get('generation_id')} from member {member} "
                        f"after it was answered {error} (it must rejoin first)",
                        node(e.get("client_id"))))
                    del told[member]
            if api == "JoinGroup" or (api == _CGH and member in told
                                      and arrival > told[member][1]):
                told.pop(member, None)
            code = e.get("error_code")
            if code == _FENCED and member not in fenced:
                fenced[member] = float(e["at_ms"])
            elif code in _TOLD_GONE and api in _STALE_APIS | {"SyncGroup", _CGH}:
                told.setdefault(member, (e.get("generation_id"), float(e["at_ms"]),
                                         ErrorCode(code).name))
        elif kind == "MemberRemoved" and e.get("reason") == "rebalance_timeout":
            client = client_of_member.get(e["member_id"], "")
            if open_connections.get(client):
                out.append(Violation(
                    "no-rejoin-within-rebalance-timeout",
                    f"member {e['member_id']} was removed for not rejoining within its rebalance "
                    f"timeout while its client was still connected", node(client)))
    return out + consumer_group_rules(events, group_id=group_id, partitions=partitions)


def consumer_group_rules(events: Sequence[Mapping[str, Any]], *, group_id: str,
                         partitions: Sequence[TP] = ()) -> list[Violation]:
    """The consumer protocol's (KIP-848) assignment rules, from the coordinator's events:

    - every target assignment (each ``TargetAssignmentComputed`` applied to the members' targets
      before it, a removed member's dropped, a replaced static member's handed to its
      successor) gives each partition to one member, and all of ``partitions`` to some member
      (an assignor's; an upgrade's carried-over targets, with no assignor, need not cover);
    - no partition is owned by two members at once: a member owns what it was assigned plus
      what it has yet to revoke (``MemberReconciled``) until it reconciles again or leaves --
      KIP-848 hands a partition over only once its previous owner revoked it.

    A classic group's timeline has none of these events: nothing to check, nothing reported."""
    want = set(partitions)
    target: dict[str, set[TP]] = {}
    owned: dict[str, set[TP]] = {}
    replaced: dict[str, set[TP]] = {}  # a replaced static member's target, for its successor
    out: list[Violation] = []
    reported: set[TP] = set()  # one report per partition and rule, not one per heartbeat
    for e in sorted(events, key=lambda e: e.get("seq", 0)):
        if e.get("group_id") != group_id:
            continue
        kind = e.get("type")
        if kind == "MemberAdded" and e.get("replaces"):
            # the coordinator removes the replaced static member first, then adds its successor
            handed = replaced.pop(e["replaces"], None) or target.pop(e["replaces"], None)
            if handed is not None:
                target[e["member_id"]] = handed
            owned.pop(e["replaces"], None)
        elif kind == "MemberRemoved":
            gone = target.pop(e.get("member_id"), None)
            if gone is not None and e.get("reason") == "replaced":
                replaced[e["member_id"]] = gone
            owned.pop(e.get("member_id"), None)
        elif kind == "TargetAssignmentComputed":
            for member, topics in e.get("changed") or ():
                target[member] = _tps(topics)
            out += _target_violations(e, target, want)
        elif kind == "MemberReconciled":
            member = e["member_id"]
            owned[member] = _tps(e.get("assigned") or ()) | _tps(e.get("pending_revocation") or ())
            for tp in sorted(owned[member]):
                others = [m for m, tps in owned.items() if m != member and tp in tps]
                if others and tp not in reported:
                    reported.add(tp)
                    out.append(Violation(
                        "assigned-before-revoked", f"member epoch {e.get('member_epoch')}: "
                        f"{tp[0]}-{tp[1]} owned by members {others[0]} and {member} at once "
                        "(the coordinator assigned it before its owner revoked it)"))
    return out


def _tps(topics: Any) -> set[TP]:
    return {(topic, int(p)) for topic, parts in topics for p in parts}


def _target_violations(e: Mapping[str, Any], target: Mapping[str, set[TP]],
                       want: set[TP]) -> list[Violation]:
    epoch = e.get("assignment_epoch")
    seen: dict[TP, str] = {}
    out = []
    for member, tps in sorted(target.items()):
        for tp in sorted(tps):
            if tp in seen:
                out.append(Violation("invalid-assignment", f"target assignment epoch {epoch}: "
                                     f"{tp[0]}-{tp[1]} assigned to members {seen[tp]} and "
                                     f"{member}"))
            seen[tp] = member
    missing = want - set(seen)
    # assignor "": an upgrade's carried-over classic assignments, which may leave a departed
    # member's partitions to the next epoch (computed in the same heartbeat)
    if want and target and missing and e.get("assignor") != "":
        out.append(Violation("invalid-assignment", f"target assignment epoch {epoch}: "
                             f"{_fmt(missing)} assigned to no member"))
    return out


def _generation_assignment(e: Mapping[str, Any], want: set[TP]) -> list[Violation]:
    generation = e.get("generation")
    seen: dict[TP, str] = {}
    out = []
    for member, decoded in sorted(e["decoded_assignments"].items()):
        for topic, parts in ((decoded or {}).get("partitions") or {}).items():
            for p in parts:
                tp = (topic, int(p))
                if tp in seen:
                    out.append(Violation("invalid-assignment",
                                         f"generation {generation}: {topic}-{p} assigned to "
                                         f"members {seen[tp]} and {member}"))
                seen[tp] = member
    missing = want - set(seen)
    # KIP-429: a cooperative generation withholds the partitions its owners must give up first
    # and hands them out in the next one; only the settled points (checkpoints) must cover all
    cooperative = "cooperative" in (e.get("protocol_name") or "")
    if want and seen and missing and not cooperative:
        out.append(Violation("invalid-assignment", f"generation {generation}: {_fmt(missing)} "
                             f"assigned to no member"))
    return out


def departures(events: Sequence[Mapping[str, Any]], *, group_id: str) -> dict[str, list[float]]:
    """client id -> the wall-clock ms at which the coordinator removed a member of that client
    from ``group_id`` (any reason: left, expired, replaced by a static successor), in order.
    A pending id (MEMBER_ID_REQUIRED, never a member) is not a departure."""
    advanced = 0.0
    client_of_member: dict[str, str] = {}
    out: dict[str, list[float]] = {}

    def left(member: str | None, at_ms: Any) -> None:
        client = client_of_member.get(member or "")
        if client is not None and isinstance(at_ms, (int, float)):
            out.setdefault(client, []).append(float(at_ms) - advanced)

    for e in sorted(events, key=lambda e: e.get("seq", 0)):
        kind = e.get("type")
        if kind == "TimeAdvanced":
            advanced += float(e.get("by_ms") or 0)
            continue
        if e.get("group_id") != group_id:
            continue
        if kind == "MemberAdded":
            if e.get("replaces"):
                left(e["replaces"], e.get("at_ms"))
            if e.get("client_id") is not None:
                client_of_member[e["member_id"]] = e["client_id"]
        elif kind == "MemberRemoved" and not e.get("pending"):
            left(e.get("member_id"), e.get("at_ms"))
    return out
