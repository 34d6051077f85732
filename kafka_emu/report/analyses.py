"""The report's tables, each a DataFrame built from ``Traces`` with the DataFrame API only.

- ``client_matrix``: per client software name and version: runs, connections, requests, error
  responses, the share of requests throttled and faulted;
- ``api_versions``: requests per client, API and version, with the broker's highest version;
- ``client_errors``: error responses per client, API and error code (the heat map);
- ``rebalances``: one row per group generation: trigger reason, PreparingRebalance -> Stable
  duration, members before/after, who joined and who left (with the removal reasons), and the
  group's client; ``rebalance_percentiles``: p50/p95/p99 of those durations per client version;
- ``conformance``: scenario verdicts per scenario, client and client version.
The violations are in ``violations.py``.
"""

from __future__ import annotations

from typing import Any

from .load import Traces, gathered, nearest, ordered


def _F():
    from pyspark.sql import functions as F
    return F


def _W():
    from pyspark.sql import Window
    return Window


def _total(col: str) -> Any:
    """A sum of counts, never null in a group (a count's column is non-null; keeps it so)."""
    F = _F()
    return F.coalesce(F.sum(col), F.lit(0).cast("long"))


def request_counts(t: Traces) -> Any:
    """Requests counted per client, run, connection, API, version and error (with how many were
    throttled and how many faulted): what the client matrix, the API versions, the error heat
    map and the run table count, read from the cached traces in one pass instead of four (each
    pass over every request line cost more than the counting). Small: the job caches it."""
    F = _F()
    faults = (t.events.where(F.col("kind") == "fault_fired")
              .select("run", "connection_id", "correlation_id", F.lit(True).alias("faulted"))
              .dropDuplicates(["run", "connection_id", "correlation_id"]))
    # faults are few next to the requests: broadcast, or the join would shuffle every request
    r = t.requests.join(F.broadcast(faults), ["run", "connection_id", "correlation_id"], "left")
    # grouped within a run: no shuffle of the requests (see load())
    return (r.groupBy("client_name", "client_version", "run", "connection_id", "api", "version",
                      "err")
            .agg(F.count(F.lit(1)).alias("n"),
                 F.sum(F.when(F.col("throttle_time_ms") > 0, 1).otherwise(0)).alias("throttled"),
                 F.sum(F.when(F.col("faulted"), 1).otherwise(0)).alias("faulted")))


def client_matrix(counts: Any) -> Any:
    """From ``request_counts``."""
    F = _F()
    per_connection = (counts.groupBy("client_name", "client_version", "run", "connection_id")
                      .agg(F.sum("n").alias("n"),
                           F.sum(F.when(F.col("err") != 0, F.col("n")).otherwise(0))
                           .alias("errors"),
                           F.sum("throttled").alias("throttled"),
                           F.sum("faulted").alias("faulted")))
    share = lambda col: F.sum(col).cast("double") / F.sum("n").cast("double")  # noqa: E731
    return ordered(per_connection.groupBy("client_name", "client_version")
            .agg(F.countDistinct("run").alias("runs"),
                 F.count(F.col("connection_id")).alias("connections"),
                 F.sum("n").alias("requests"),
                 F.sum("errors").alias("error_responses"),
                 share("throttled").alias("throttled_share"),
                 share("faulted").alias("faulted_share")),
                   "client_name", "client_version")


def api_versions(t: Traces, counts: Any) -> Any:
    """From ``request_counts``, with the broker's highest version of each API."""
    F = _F()
    broker_max = (t.runs.select(F.explode("broker_api_versions").alias("api", "broker_max"))
                  .groupBy("api").agg(F.max("broker_max").alias("broker_max")))
    return ordered(counts.groupBy("client_name", "client_version", "api", "version")
            .agg(_total("n").alias("requests"))
            .join(broker_max, "api", "left")
            .select("client_name", "client_version", "api", "version", "requests", "broker_max"),
                   "client_name", "client_version", "api", "version")


def client_errors(counts: Any) -> Any:
    """From ``request_counts``."""
    F = _F()
    return ordered(counts.where(F.col("err") != 0)
            .groupBy("client_name", "client_version", "api", F.col("err").alias("error_code"))
            .agg(_total("n").alias("responses")),
                   "client_name", "client_version", "api", "error_code")


def group_clients(t: Traces) -> Any:
    """(run, group_id) -> the client of its first JoinGroup: whose rebalance it is."""
    F = _F()
    joins = t.requests.where((F.col("api") == "JoinGroup") & F.col("group_id").isNotNull())
    first = F.min(F.struct("seq", "client_name", "client_version"))
    return (joins.groupBy("run", "group_id").agg(first.alias("f"))
            .select("run", "group_id", F.col("f.client_name").alias("client_name"),
                    F.col("f.client_version").alias("client_version")))


def rebalances(t: Traces) -> Any:
    """One row per generation of each group (see the module doc).

    The coordinator emits, per rebalance: RebalanceTriggered, StateChanged(->PreparingRebalance),
    ..., GenerationChanged, ..., StateChanged(->Stable). One ordered pass per group over those
    kinds finds, for each GenerationChanged, the trigger before it and the Stable after it (if
    it came before the next generation), and the members of the previous generation."""
    F, W = _F(), _W()
    e = t.events
    keep = (F.col("kind").isin("rebalance_triggered", "generation_changed", "member_removed",
                               "member_added")
            | ((F.col("kind") == "state_changed") & (F.col("new") == "Stable")))
    rows = e.where(keep & F.col("group_id").isNotNull()).select(
        "run", "group_id", "seq", "at_ms", "kind", "reason", "generation", "members",
        "member_id")
    by_group = W.partitionBy("run", "group_id").orderBy("seq")
    before = by_group.rowsBetween(W.unboundedPreceding, -1)
    # the nearest row after this one, as the nearest before it in the reverse order (nearest())
    after = (W.partitionBy("run", "group_id").orderBy(F.col("seq").desc())
             .rowsBetween(W.unboundedPreceding, -1))
    is_gen = F.col("kind") == "generation_changed"
    is_trigger = F.col("kind") == "rebalance_triggered"
    is_stable = F.col("kind") == "state_changed"
    # which generation's rebalance a member event belongs to: the next GenerationChanged
    gen_ordinal = F.sum(F.when(is_gen, 1).otherwise(0)).over(
        by_group.rowsBetween(W.unboundedPreceding, 0))
    rows = rows.withColumn("target", F.when(is_gen, gen_ordinal).otherwise(gen_ordinal + 1))

    # one select per frame: one window pass each (a pass copies every row)
    gens = (rows
            .select("*",
                    nearest(F.col("seq"), is_gen, before, "prev_gen_seq"),
                    nearest(F.col("members"), is_gen, before, "prev_members"),
                    nearest(F.col("seq"), is_trigger, before, "trigger_seq"),
                    nearest(F.col("at_ms"), is_trigger, before, "trigger_at"),
                    nearest(F.col("reason"), is_trigger, before, "trigger_reason"))
            .select("*",
                    nearest(F.col("seq"), is_gen, after, "next_gen_seq"),
                    nearest(F.col("seq"), is_stable, after, "stable_seq"),
                    nearest(F.col("at_ms"), is_stable, after, "stable_at"))
            .where(is_gen))
    own_trigger = F.col("trigger_seq") > F.coalesce(F.col("prev_gen_seq"), F.lit(-1))
    reached_stable = F.col("stable_seq").isNotNull() & (
        F.col("next_gen_seq").isNull() | (F.col("stable_seq") < F.col("next_gen_seq")))
    members_before = F.coalesce(F.col("prev_members"), F.array().cast("array<string>"))
    gens = gens.select(
        "run", "group_id", "generation", F.col("target"),
        F.when(own_trigger, F.col("trigger_reason")).alias("reason"),
        F.when(own_trigger, F.col("trigger_at")).alias("started_ms"),
        F.when(reached_stable, F.col("stable_at")).alias("stable_ms"),
        F.size(members_before).alias("members_before"),
        F.size("members").alias("members_after"),
        F.array_except("members", members_before).alias("joined"),
        F.array_except(members_before, "members").alias("left"))
    removed = (rows.where(F.col("kind") == "member_removed")
               .groupBy("run", "group_id", "target")
               .agg(F.collect_list(F.struct("member_id", "reason")).alias("removed")))
    out = (gens.join(removed, ["run", "group_id", "target"], "left")
           .withColumn("duration_ms", F.col("stable_ms") - F.col("started_ms"))
           .join(group_clients(t), ["run", "group_id"], "left")
           .drop("target"))
    return ordered(out.select("run", "group_id", "generation", "reason", "started_ms",
                              "stable_ms", "duration_ms", "members_before", "members_after",
                              "joined", "left", "removed", "client_name", "client_version"),
                   "run", "group_id", "generation")


def rebalance_percentiles(rebalances_df: Any) -> Any:
    F = _F()
    q = F.percentile_approx("duration_ms", [0.5, 0.95, 0.99], 10000)
    return ordered(rebalances_df.where(F.col("duration_ms").isNotNull())
            .groupBy("client_name", "client_version")
            .agg(F.count(F.lit(1)).alias("rebalances"), q.alias("q"),
                 F.max("duration_ms").alias("max_ms"))
            .select("client_name", "client_version", "rebalances",
                    F.col("q")[0].alias("p50_ms"), F.col("q")[1].alias("p95_ms"),
                    F.col("q")[2].alias("p99_ms"), "max_ms"),
                   "client_name", "client_version")


VERDICT = "scenario_verdict"  # the conformance table's one kind
# its columns, to write it empty without building it (as transactions.SCHEMAS)
CONFORMANCE_SCHEMA = ("scenario STRING, client STRING, client_version STRING, "
                      "runs BIGINT NOT NULL, passed BIGINT, failed BIGINT, a_reason STRING, "
                      "verdict STRING NOT NULL")


def conformance(t: Traces) -> Any:
    F = _F()
    v = t.events.where(F.col("kind") == VERDICT)
    return ordered(v.groupBy("scenario", "client", "client_version")
            .agg(F.count(F.lit(1)).alias("runs"),
                 F.sum(F.when(F.col("verdict") == "pass", 1).otherwise(0)).alias("passed"),
                 F.sum(F.when(F.col("verdict") != "pass", 1).otherwise(0)).alias("failed"),
                 F.max(F.when(F.col("verdict") != "pass", F.col("reason"))).alias("a_reason"))
            .withColumn("verdict", F.when(F.col("failed") > 0, "fail").otherwise("pass")),
                   "scenario", "client", "client_version")


def runs_table(t: Traces, counts: Any) -> Any:
    """Per run: its start, its events (the requests from ``request_counts``) and whether it
    ended cleanly."""
    F = _F()
    every = t.events.select("run", "kind", F.lit(1).cast("long").alias("n")).unionByName(
        counts.select("run", F.lit("request_handled").alias("kind"), "n"))
    per_run = gathered(every).groupBy("run").agg(F.sum("n").alias("events"),
                                       F.max(F.when(F.col("kind") == "run_end", 1))
                                       .isNotNull().alias("ended_cleanly"))
    return ordered(t.runs.join(per_run, "run", "left")
                   .select("run", "started_ms", "emu_version", "labels", "events",
                           "ended_cleanly"),
                   "started_ms")


# what a run's view draws: the coordinator's events, faults, and the requests around them
TIMELINE_KINDS = ("run_start", "run_end", "rebalance_triggered", "state_changed",
                  "generation_changed", "leader_changed", "member_added", "member_removed",
                  "assignments_distributed", "fault_fired", "time_advanced",
                  "consumer_group_state_changed", "group_epoch_bumped")
TIMELINE_APIS = ("JoinGroup", "SyncGroup", "LeaveGroup", "ConsumerGroupHeartbeat")


def run_timeline(t: Traces) -> Any:
    """The rows a run's view draws, in one narrow table: every group transition (trigger,
    state, generation with its members, members added and removed), faults fired, and the
    requests that explain them -- the group membership requests and every request answered
    with an error (heartbeats and commits that went well are left out: they are most of a
    trace and say nothing about a transition). Not written as a table: the page's data."""
    F = _F()
    null = lambda tp: F.lit(None).cast(tp)  # noqa: E731
    ev = (t.events.where(F.col("kind").isin(*TIMELINE_KINDS))
          .select("run", "seq", "at_ms", "kind", "group_id", "member_id",
                  F.coalesce("generation", "generation_id").alias("generation"),
                  F.col("new").alias("state"), "reason", "members", "api",
                  null("long").alias("err"), "connection_id", "action",
                  null("string").alias("client_name"), null("string").alias("client_version")))
    rq = (t.requests.where(F.col("api").isin(*TIMELINE_APIS) | (F.col("err") != 0))
          .select("run", "seq", "at_ms", F.lit("request").alias("kind"), "group_id",
                  "member_id", F.col("generation_id").alias("generation"),
                  null("string").alias("state"), null("string").alias("reason"),
                  null("array<string>").alias("members"), "api", "err", "connection_id",
                  null("string").alias("action"), "client_name", "client_version"))
    return ev.unionByName(rq)


def connection_clients(counts: Any) -> Any:
    """(run, connection_id) -> the client on it: how the page names a violation's client."""
    return counts.select("run", "connection_id", "client_name", "client_version").distinct()
