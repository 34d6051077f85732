"""Group-protocol violations found in traces, one DataFrame of rows with the same columns:
kind, run, group_id, member_id, seq, at_ms, api, correlation_id, connection_id, detail.

Kinds (each row names the request -- or the event -- that shows it):
- ``stale_after_rejoin``: an OffsetCommit or Heartbeat answered ILLEGAL_GENERATION or
  UNKNOWN_MEMBER_ID, sent by a member that had already been told to rejoin (an earlier answer
  REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID) and had not sent a JoinGroup
  since;
- ``after_fenced``: any request from a member id after it was answered FENCED_INSTANCE_ID;
- ``no_rejoin_in_time``: a member told REBALANCE_IN_PROGRESS and then removed by the coordinator
  because it did not rejoin within the rebalance timeout;
- ``assignment_overlap`` / ``assignment_gap``: a leader's SyncGroup assignment (consumer
  protocol) giving one partition to two members, or leaving a partition of a subscribed topic
  to nobody (partition counts from the trace's ``topics_known``);
- ``double_fetch``: one partition fetched by two members of one group in the same generation
  (between the generation's assignment and the next rebalance), counting only fetches whose
  member is unambiguous: the fetching connection's client id belongs to exactly one member of
  one group at that time;
- ``offset_backwards``: a committed offset lower than the previous commit of that partition in
  that group;
- ``heartbeat_too_fast``: a member whose median heartbeat interval (exact) is below its session
  timeout / HEARTBEATS_PER_SESSION_LIMIT (the session timeout needs only a few per timeout) --
  and, when the run says which interval its clients were configured with (a label
  ``heartbeat.interval.ms``), below half of that: heartbeating as configured is the setting's
  doing, not the client's.
"""

from __future__ import annotations

from typing import Any

from .load import Traces, gathered, nearest, ordered

REJOIN_ERRORS = (27, 22, 25)  # REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID
STALE_ERRORS = (22, 25)
FENCED_INSTANCE_ID = 82
REBALANCE_IN_PROGRESS = 27
HEARTBEATS_PER_SESSION_LIMIT = 50
MIN_HEARTBEATS = 10

COLUMNS = ("kind", "run", "group_id", "member_id", "seq", "at_ms", "api", "correlation_id",
           "connection_id", "detail")
MEMBER = ("run", "group_id", "member_id")  # a member is named within its group and run


def _F():
    from pyspark.sql import functions as F
    return F


def _W():
    from pyspark.sql import Window
    return Window


def _shape(df: Any, kind: str, detail: Any) -> Any:
    F = _F()
    cols = {"kind": F.lit(kind), "detail": detail}
    out = []
    for name in COLUMNS:
        if name in cols:
            out.append(cols[name].cast("string").alias(name))
        elif name in df.columns:
            out.append(F.col(name))
        else:
            out.append(F.lit(None).cast("long" if name in ("seq", "at_ms", "correlation_id",
                                                            "connection_id") else "string")
                       .alias(name))
    return df.select(*out)


def _member_requests(t: Traces) -> Any:
    F = _F()
    return t.requests.where(F.col("group_id").isNotNull() & F.col("member_id").isNotNull()
                            & (F.col("member_id") != ""))


def member_violations(t: Traces) -> Any:
    """``stale_after_rejoin``, ``after_fenced`` and ``heartbeat_too_fast``."""
    return _told_and_fenced(t).unionByName(heartbeat_too_fast(t))


def _told_and_fenced(t: Traces) -> Any:
    """``stale_after_rejoin`` and ``after_fenced`` in one ordered pass over each member's
    requests -- only those that can show or explain one: the answers telling it to rejoin, its
    JoinGroups, and every request of a member ever answered FENCED_INSTANCE_ID (few, next to
    the heartbeats and commits that make up nearly all). Per request, from the requests
    before it: the last time the member was told to rejoin (and with which error), its last
    JoinGroup and its last FENCED_INSTANCE_ID. A request can show both kinds."""
    F, W = _F(), _W()
    before = W.partitionBy(*MEMBER).orderBy("seq").rowsBetween(W.unboundedPreceding, -1)
    api, err, seq = F.col("api"), F.col("err"), F.col("seq")
    told = err.isin(*REJOIN_ERRORS) & api.isin("Heartbeat", "OffsetCommit", "SyncGroup")
    m = _member_requests(t)
    fenced_members = (m.where(err == FENCED_INSTANCE_ID).select(*MEMBER).distinct()
                      .withColumn("was_fenced", F.lit(True)))
    r = (m.join(F.broadcast(fenced_members), list(MEMBER), "left")
         .where(told | (api == "JoinGroup") | F.col("was_fenced").isNotNull())
         .select(*MEMBER, "seq", "at_ms", "api", "correlation_id", "connection_id",
                 "generation_id", "err", "group_instance_id",
                 nearest(seq, told, before, "told_seq"),
                 nearest(err, told, before, "told_err"),
                 nearest(seq, api == "JoinGroup", before, "join_seq"),
                 nearest(seq, err == FENCED_INSTANCE_ID, before, "fenced_seq")))
    stale = (api.isin("Heartbeat", "OffsetCommit") & err.isin(*STALE_ERRORS)
             & F.col("told_seq").isNotNull()
             & (F.col("join_seq").isNull() | (F.col("join_seq") < F.col("told_seq"))))
    fenced = F.col("fenced_seq").isNotNull()

    def found(kind: str, detail: Any) -> Any:
        return F.struct(F.lit(kind).alias("kind"), detail.cast("string").alias("detail"))

    shown = F.filter(F.array(
        F.when(stale, found("stale_after_rejoin", F.concat(
            F.lit("generation "), F.col("generation_id").cast("string"), F.lit(" answered "),
            err.cast("string"), F.lit(" after being told "), F.col("told_err").cast("string"),
            F.lit(" at seq "), F.col("told_seq").cast("string"),
            F.lit(" without rejoining")))),
        F.when(fenced, found("after_fenced", F.concat(
            api, F.lit(" after FENCED_INSTANCE_ID at seq "), F.col("fenced_seq").cast("string"),
            F.lit(" (instance "), F.coalesce(F.col("group_instance_id"), F.lit("?")),
            F.lit(")"))))),
        lambda v: v.isNotNull())
    hits = (r.where(stale | fenced)
            .select("*", F.explode(shown).alias("v"))
            # (a kind is never null; coalesce says so to the schema, as a literal does)
            .select("*", F.coalesce(F.col("v.kind"), F.lit("")).alias("kind"),
                    F.col("v.detail").alias("detail")))
    return hits.select(*COLUMNS)


def stale_after_rejoin(t: Traces) -> Any:
    return _told_and_fenced(t).where("kind = 'stale_after_rejoin'")


def after_fenced(t: Traces) -> Any:
    return _told_and_fenced(t).where("kind = 'after_fenced'")


def heartbeat_too_fast(t: Traces) -> Any:
    """One row per member (its first heartbeat's) whose median interval between heartbeats --
    the exact lower median, as DuckDB's ``quantile_disc`` -- is below its session timeout /
    HEARTBEATS_PER_SESSION_LIMIT. A narrow pass over the heartbeats alone (each interval as a
    lag), then one aggregation per member."""
    F, W = _F(), _W()
    by_member = W.partitionBy(*MEMBER).orderBy("seq")
    m = _member_requests(t)
    beats = (m.where(F.col("api") == "Heartbeat")
             .select(*MEMBER, "seq", "at_ms", "correlation_id", "connection_id",
                     (F.col("at_ms") - F.lag("at_ms").over(by_member)).alias("gap")))
    # the session timeout the member asked for: one row per member, as on the other side
    session = (m.where(F.col("api") == "JoinGroup").groupBy(*MEMBER)
               .agg(F.max("session_timeout_ms").alias("member_session_ms")))
    fast = (beats.groupBy(*MEMBER)
            .agg(F.count(F.lit(1)).alias("heartbeats"),
                 F.expr("percentile_disc(0.5) WITHIN GROUP (ORDER BY gap)").cast("long")
                 .alias("median_gap"),
                 F.min("seq").alias("seq"),
                 *(F.min_by(c, "seq").alias(c)
                   for c in ("at_ms", "correlation_id", "connection_id")))
            .where(F.col("heartbeats") >= MIN_HEARTBEATS)
            .join(session, list(MEMBER))
            .transform(gathered)  # (a join's output, under a join: see load.gathered())
            .join(configured_heartbeats(t), "run", "left")
            .where((F.col("median_gap") * HEARTBEATS_PER_SESSION_LIMIT
                    < F.col("member_session_ms"))
                   & (F.col("configured_ms").isNull()
                      | (F.col("median_gap") * 2 < F.col("configured_ms")))))
    return _shape(fast.withColumn("api", F.lit("Heartbeat")), "heartbeat_too_fast", F.concat(
        F.col("heartbeats").cast("string"), F.lit(" heartbeats, median every "),
        F.col("median_gap").cast("string"), F.lit(" ms for a session timeout of "),
        F.col("member_session_ms").cast("string"), F.lit(" ms"),
        F.coalesce(F.concat(F.lit(" (configured every "), F.col("configured_ms").cast("string"),
                            F.lit(" ms)")), F.lit(""))))


HEARTBEAT_LABELS = ("heartbeat.interval.ms", "heartbeat_interval_ms")


def configured_heartbeats(t: Traces) -> Any:
    """run -> the heartbeat interval its clients were configured with, where the run says
    (a trace label ``heartbeat.interval.ms`` or ``heartbeat_interval_ms``): the classic
    protocol never sends it, so only the run can tell a client heartbeating as asked from
    one heartbeating faster than asked."""
    F = _F()
    value = F.coalesce(*(F.expr(f"try_cast(labels['{k}'] AS BIGINT)") for k in HEARTBEAT_LABELS))
    return t.runs.select("run", value.alias("configured_ms")).where(
        F.col("configured_ms").isNotNull())


def no_rejoin_in_time(t: Traces) -> Any:
    F = _F()
    removed = (t.events.where((F.col("kind") == "member_removed")
                              & (F.col("reason") == "rebalance_timeout"))
               .select("run", "group_id", "member_id", F.col("seq").alias("removed_seq"),
                       F.col("at_ms").alias("removed_at")))
    told = (_member_requests(t).where(F.col("err") == REBALANCE_IN_PROGRESS)
            .select("run", "group_id", "member_id", "seq", "at_ms", "api", "correlation_id",
                    "connection_id"))
    j = removed.join(told, ["run", "group_id", "member_id"]).where(
        F.col("seq") < F.col("removed_seq"))
    last = (j.groupBy("run", "group_id", "member_id", "removed_seq", "removed_at")
            .agg(F.max(F.struct("seq", "at_ms", "api", "correlation_id", "connection_id"))
                 .alias("t"))
            .select("run", "group_id", "member_id", "removed_seq", "removed_at", "t.*"))
    return _shape(last, "no_rejoin_in_time", F.concat(
        F.lit("told REBALANCE_IN_PROGRESS on "), F.col("api"), F.lit(", removed "),
        (F.col("removed_at") - F.col("at_ms")).cast("string"),
        F.lit(" ms later for not rejoining within the rebalance timeout")))


def _assigned(t: Traces) -> Any:
    """(run, group_id, generation, seq, at_ms, member_id, topic, partition) per assignment."""
    F = _F()
    a = t.events.where((F.col("kind") == "assignments_distributed")
                       & (F.col("protocol_type") == "consumer"))
    return (a.select("run", "group_id", "generation", "seq", "at_ms",
                     F.explode("assignments").alias("a"))
            .select("run", "group_id", "generation", "seq", "at_ms",
                    F.col("a.member_id").alias("member_id"),
                    F.explode(F.coalesce(F.col("a.topics"), F.array().cast(
                        "array<struct<topic:string,partitions:array<bigint>>>"))).alias("tp"))
            .select("run", "group_id", "generation", "seq", "at_ms", "member_id",
                    F.col("tp.topic").alias("topic"),
                    F.explode("tp.partitions").alias("partition")))


def assignment_overlap(t: Traces) -> Any:
    F = _F()
    over = (_assigned(t).groupBy("run", "group_id", "generation", "seq", "at_ms", "topic",
                                 "partition")
            .agg(F.sort_array(F.collect_set("member_id")).alias("owners"))
            .where(F.size("owners") > 1))
    return _shape(over.withColumn("member_id", F.col("owners")[0]), "assignment_overlap",
                  F.concat(F.lit("generation "), F.col("generation").cast("string"),
                           F.lit(": "), F.col("topic"), F.lit("-"),
                           F.col("partition").cast("string"), F.lit(" assigned to "),
                           F.concat_ws(", ", "owners")))


def assignment_gap(t: Traces) -> Any:
    F, W = _F(), _W()
    e = t.events
    dist = e.where((F.col("kind") == "assignments_distributed")
                   & (F.col("protocol_type") == "consumer"))
    # every member's assignment decoded, or the gap cannot be judged
    decoded = dist.where(~F.exists("assignments", lambda a: a.getField("topics").isNull()))
    known = e.where(F.col("kind") == "topics_known").select("run", "seq", "topic_partitions")
    both = (decoded.select("run", "group_id", "generation", "seq", "at_ms",
                           F.lit(None).cast("array<struct<topic:string,count:bigint>>")
                           .alias("topic_partitions"))
            .unionByName(known.select("run", F.lit(None).cast("string").alias("group_id"),
                                      F.lit(None).cast("long").alias("generation"), "seq",
                                      F.lit(None).cast("long").alias("at_ms"),
                                      "topic_partitions")))
    both = gathered(both)  # (a union, under a window)
    w = W.partitionBy("run").orderBy("seq").rowsBetween(W.unboundedPreceding, 0)
    with_counts = (both.withColumn("counts", F.last("topic_partitions", True).over(w))
                   .where(F.col("group_id").isNotNull() & F.col("counts").isNotNull()))
    subscribed = (e.where(F.col("kind") == "member_subscribed")
                  .select("run", "group_id", "generation",
                          F.explode("metadata.topics").alias("topic")).distinct())
    expected = (with_counts.select("run", "group_id", "generation", "seq", "at_ms",
                                   F.explode("counts").alias("c"))
                .select("run", "group_id", "generation", "seq", "at_ms",
                        F.col("c.topic").alias("topic"),
                        F.explode(F.sequence(F.lit(0).cast("long"),
                                             F.col("c.count") - 1)).alias("partition"))
                .join(subscribed, ["run", "group_id", "generation", "topic"]))
    assigned = _assigned(t).select("run", "group_id", "generation", "topic", "partition")
    gaps = (expected.join(assigned, ["run", "group_id", "generation", "topic", "partition"],
                          "left_anti"))
    return _shape(gaps, "assignment_gap", F.concat(
        F.lit("generation "), F.col("generation").cast("string"), F.lit(": subscribed "),
        F.col("topic"), F.lit("-"), F.col("partition").cast("string"),
        F.lit(" assigned to nobody")))


def double_fetch(t: Traces) -> Any:
    F, W = _F(), _W()
    e = t.events
    # generation windows: from its assignment going out to the next rebalance of the group
    marks = e.where(F.col("kind").isin("assignments_distributed", "rebalance_triggered")
                    & F.col("group_id").isNotNull()).select("run", "group_id", "seq", "at_ms",
                                                            "kind", "generation")
    # the next rebalance: the nearest before in the reverse order (see nearest())
    w = (W.partitionBy("run", "group_id").orderBy(F.col("seq").desc())
         .rowsBetween(W.unboundedPreceding, -1))
    windows = (marks.select("*", nearest(F.col("at_ms"), F.col("kind") == "rebalance_triggered",
                                         w, "end_at"))
        .where(F.col("kind") == "assignments_distributed")
        .select("run", "group_id", "generation", F.col("at_ms").alias("start_at"), "end_at"))
    gens = (e.where(F.col("kind") == "generation_changed")
            .select("run", "group_id", "generation", F.explode("members").alias("member_id")))
    clients = (t.requests.where((F.col("api") == "JoinGroup") & (F.col("member_id") != ""))
               .select("run", "group_id", "member_id", "client_id").distinct())
    # (each join's output gathered for the join above it: see load.gathered())
    members = gathered(windows.join(gens, ["run", "group_id", "generation"]).transform(gathered)
                       .join(clients, ["run", "group_id", "member_id"]))
    fetches = (t.requests.where((F.col("api") == "Fetch") & (F.size("partitions") > 0))
               .select("run", "seq", "at_ms", "correlation_id", "connection_id", "client_id",
                       (F.col("at_ms") - F.col("latency_ms")).alias("sent_at"),
                       "partitions"))
    # members is small (one row per member per generation): broadcast, so the fetches stay
    # where they are (clustered by run) and the steps below shuffle nothing
    candidates = fetches.join(F.broadcast(members), ["run", "client_id"]).where(
        (F.col("sent_at") >= F.col("start_at"))
        & (F.col("end_at").isNull() | (F.col("sent_at") < F.col("end_at"))))
    per_fetch = W.partitionBy("run", "seq")
    owned = (candidates.withColumn("n", F.count(F.lit(1)).over(per_fetch))
             .where(F.col("n") == 1)  # unambiguous: one member of one group
             .select("run", "group_id", "generation", "member_id", "seq", "at_ms",
                     "correlation_id", "connection_id",
                     F.explode("partitions").alias("tp")))
    # per member first (a hash aggregation: every buffer is a number), then per partition
    # over those few rows: one aggregation over every fetched partition whose buffers hold a
    # struct or a set would sort them all
    keys = ("run", "group_id", "generation", "topic", "partition")
    per_member = (owned.select("*", F.col("tp.topic").alias("topic"),
                               F.col("tp.partition").alias("partition"))
                  .groupBy(*keys, "member_id")
                  .agg(F.min("seq").alias("seq"),
                       *(F.min_by(c, "seq").alias(c)
                         for c in ("at_ms", "correlation_id", "connection_id"))))
    first = (per_member.groupBy(*keys)
             .agg(F.min(F.struct("seq", "at_ms", "member_id", "correlation_id",
                                 "connection_id")).alias("f"),
                  F.sort_array(F.collect_list("member_id")).alias("fetchers"))
             .where(F.size("fetchers") > 1)
             .select(*keys, "fetchers", "f.*"))
    return _shape(first.withColumn("api", F.lit("Fetch")), "double_fetch", F.concat(
        F.lit("generation "), F.col("generation").cast("string"), F.lit(": "), F.col("topic"),
        F.lit("-"), F.col("partition").cast("string"), F.lit(" fetched by "),
        F.concat_ws(", ", "fetchers")))


def offset_backwards(t: Traces) -> Any:
    F, W = _F(), _W()
    c = (t.events.where(F.col("kind") == "offsets_committed")
         .select("run", "group_id", "member_id", "seq", "at_ms", "generation_id",
                 F.explode("offsets").alias("o"))
         .select("run", "group_id", "member_id", "seq", "at_ms", "generation_id",
                 F.col("o.topic").alias("topic"), F.col("o.partition").alias("partition"),
                 F.col("o.offset").alias("offset")))
    w = W.partitionBy("run", "group_id", "topic", "partition").orderBy("seq")
    back = (c.withColumn("previous", F.lag("offset").over(w))
            .where(F.col("offset") < F.col("previous")))
    return _shape(back.withColumn("api", F.lit("OffsetCommit")), "offset_backwards", F.concat(
        F.col("topic"), F.lit("-"), F.col("partition").cast("string"), F.lit(" committed "),
        F.col("offset").cast("string"), F.lit(" after "), F.col("previous").cast("string")))


ALL = (stale_after_rejoin, after_fenced, no_rejoin_in_time, assignment_overlap, assignment_gap,
       double_fetch, offset_backwards, heartbeat_too_fast)
KINDS = tuple(fn.__name__ for fn in ALL)


# computed apart; the member kinds come from member_violations
OTHERS = (no_rejoin_in_time, assignment_overlap, assignment_gap, double_fetch, offset_backwards)


# the event kind each of OTHERS finds its rows from: without it the rule finds nothing, so a
# report whose traces hold none of it does not build the rule (absent.py)
NEEDS = {no_rejoin_in_time: "member_removed", assignment_overlap: "assignments_distributed",
         assignment_gap: "assignments_distributed", double_fetch: "assignments_distributed",
         offset_backwards: "offsets_committed"}


def violations(t: Traces, absent: frozenset[str] = frozenset()) -> Any:
    """Every kind's rows; ``absent``: event kinds the traces hold none of."""
    out = member_violations(t)
    for fn in OTHERS:
        if NEEDS[fn] not in absent:
            out = out.unionByName(fn(t))
    return ordered(out, "kind", "run", "seq")
