"""The report's share-group tables (KIP-932), from the ``share_records_changed`` trace events.

Each ShareRecordsChanged is one run of a share-partition's offsets (``first_offset`` ..
``last_offset``) that was acquired (``delivery_count`` after it), acknowledged (``ack_type`` 1
accept, 2 release, 3 reject, 0 gap), released, had its lock run out (``lock_expired``) or was
archived. A record archived without a reject before it, having been delivered, was archived at
the delivery count limit (``share.delivery.count.limit``): a poison record. (Records archived
with delivery count 0 were never delivered: control batches, aborted transactions, retention.)
Who held a record is its ``member_id``; the member's ``client_id`` comes from the requests it
sent (ShareGroupHeartbeat / ShareFetch rows carry both).

- ``share_redeliveries``: per run client label, group and topic -- acquisitions (records),
  redeliveries (records acquired at delivery count 2 or more), the highest delivery count,
  records whose lock ran out, records released (a release acknowledgement, the holder leaving
  or a leader change);
- ``share_poison_by_topic``: per run client label, topic and holder client id -- poison
  records, and records rejected (archived on purpose, for comparison);
- ``share_poison_records``: each poison run (group, topic, partition, offsets, the delivery
  count it was archived at, the last holder's client id, when).

DataFrame operations only (no UDFs: ``sequence`` + ``explode`` for offsets, an anti join for
"not rejected"), over the events' explicit schema; ``DUCKDB_SQL`` gives the same rows (the
tests check them row for row). ``section`` renders the tables for the page.
"""

from __future__ import annotations

from typing import Any

from .load import ordered
from .sections import tables_section

KIND = "share_records_changed"
COLUMNS = ("group_id", "topic", "partition", "action", "member_id", "first_offset",
           "last_offset", "delivery_count", "ack_type")
REJECT = 3
POISON_ROWS = 200  # the page lists at most this many poison runs (largest counts first)

# the tables' columns, to write a table empty without building it when the traces hold
# none of its kind (absent.py); tests/report/test_report_absent.py checks them against
# the built tables'
SCHEMAS = {
    "share_redeliveries": ("client STRING NOT NULL, group_id STRING, topic STRING, "
                           "acquired BIGINT, redelivered BIGINT, max_delivery_count BIGINT, "
                           "lock_expired BIGINT, released BIGINT"),
    "share_poison_by_topic": ("client STRING, topic STRING, client_id STRING, "
                              "poison_records BIGINT NOT NULL, rejected_records BIGINT NOT NULL"),
    "share_poison_records": ("client STRING NOT NULL, group_id STRING, topic STRING, "
                             "partition BIGINT, first_offset BIGINT, last_offset BIGINT, "
                             "delivery_count BIGINT, client_id STRING NOT NULL, at_ms BIGINT, "
                             "records BIGINT NOT NULL"),
}


def _F():
    from pyspark.sql import functions as F
    return F


def changed(events: Any, runs: Any) -> Any:
    """The share_records_changed rows with the run's client label and the holder's client id
    ("" when unknown)."""
    F = _F()
    labels = runs.select("run", F.coalesce(F.col("labels")["client"], F.lit("")).alias("client"))
    ids = (events.where(F.col("member_id").isNotNull() & F.col("client_id").isNotNull()
                        & (F.col("kind") == "request_handled"))
           .groupBy("run", "group_id", "member_id").agg(F.max("client_id").alias("client_id")))
    rows = (events.where(F.col("kind") == KIND)
            .select("run", "at_ms", *COLUMNS)
            .withColumn("records", F.col("last_offset") - F.col("first_offset") + 1))
    return (rows.join(labels, "run", "left").join(ids, ["run", "group_id", "member_id"], "left")
            .withColumn("client", F.coalesce(F.col("client"), F.lit("")))
            .withColumn("client_id", F.coalesce(F.col("client_id"), F.lit(""))))


def _records_where(cond: Any) -> Any:
    F = _F()
    return F.sum(F.when(cond, F.col("records")).otherwise(0))


def redeliveries(rows: Any) -> Any:
    F = _F()
    acquire = F.col("action") == "acquire"
    return (rows.groupBy("client", "group_id", "topic")
            .agg(_records_where(acquire).alias("acquired"),
                 _records_where(acquire & (F.col("delivery_count") > 1)).alias("redelivered"),
                 F.max(F.when(acquire, F.col("delivery_count"))).alias("max_delivery_count"),
                 _records_where(F.col("action") == "lock_expired").alias("lock_expired"),
                 _records_where(F.col("action") == "release").alias("released"))
            .where(F.col("acquired") > 0)
            .transform(ordered, F.col("redelivered").desc(), "client", "group_id", "topic"))


def _offsets(rows: Any) -> Any:
    F = _F()
    return rows.withColumn("offset", F.explode(F.sequence("first_offset", "last_offset")))


def poison(rows: Any) -> Any:
    """Archived offsets that were delivered and not rejected, one row per offset."""
    F = _F()
    keys = ["run", "group_id", "topic", "partition", "offset"]
    rejected = (_offsets(rows.where((F.col("action") == "acknowledge")
                                    & (F.col("ack_type") == REJECT)))
                .select(*keys).distinct())
    archived = _offsets(rows.where((F.col("action") == "archive")
                                   & (F.col("delivery_count") > 0)))
    return archived.join(rejected, keys, "left_anti")


def poison_by_topic(rows: Any) -> Any:
    F = _F()
    rejected = _offsets(rows.where((F.col("action") == "acknowledge")
                                   & (F.col("ack_type") == REJECT)))
    p = poison(rows).groupBy("client", "topic", "client_id").agg(
        F.count(F.lit(1)).alias("poison_records"))
    r = rejected.groupBy("client", "topic", "client_id").agg(
        F.count(F.lit(1)).alias("rejected_records"))
    keys = ["client", "topic", "client_id"]
    return (p.join(r, keys, "full_outer")
            .select(*keys, F.coalesce("poison_records", F.lit(0)).alias("poison_records"),
                    F.coalesce("rejected_records", F.lit(0)).alias("rejected_records"))
            .transform(ordered, F.col("poison_records").desc(), *keys))


def poison_records(rows: Any) -> Any:
    F = _F()
    return (poison(rows)
            .groupBy("client", "group_id", "topic", "partition", "first_offset", "last_offset",
                     "delivery_count", "client_id", "at_ms")
            .agg(F.count(F.lit(1)).alias("records"))
            .orderBy(F.col("records").desc(), "client", "group_id", "topic", "partition",
                     "first_offset", "at_ms")
            .limit(POISON_ROWS))


def tables(events: Any, runs: Any) -> dict[str, list[dict]]:
    """The three tables, collected (small: one row per group and topic, or poison run)."""
    rows = changed(events, runs)
    return {name: [r.asDict() for r in fn(rows).collect()]
            for name, fn in (("share_redeliveries", redeliveries),
                             ("share_poison_by_topic", poison_by_topic),
                             ("share_poison_records", poison_records))}


# The same tables in DuckDB over a table ``changed`` (run, at_ms, group_id, topic, partition,
# action, member_id, first_offset, last_offset, delivery_count, ack_type, records, client,
# client_id): the tests check Spark's rows against these.
_OFFSETS = """(SELECT *, unnest(generate_series(first_offset, last_offset)) AS "offset"
               FROM changed WHERE {where})"""
_POISON = f"""(SELECT a.* FROM {_OFFSETS.format(where="action = 'archive' AND delivery_count > 0")} a
    WHERE NOT EXISTS (SELECT 1 FROM {_OFFSETS.format(
        where=f"action = 'acknowledge' AND ack_type = {REJECT}")} r
        WHERE r.run = a.run AND r.group_id = a.group_id AND r.topic = a.topic
          AND r.partition = a.partition AND r."offset" = a."offset"))"""
DUCKDB_SQL = {
    "share_redeliveries": """
        SELECT client, group_id, topic,
               sum(CASE WHEN action = 'acquire' THEN records ELSE 0 END) AS acquired,
               sum(CASE WHEN action = 'acquire' AND delivery_count > 1 THEN records ELSE 0 END)
                   AS redelivered,
               max(CASE WHEN action = 'acquire' THEN delivery_count END) AS max_delivery_count,
               sum(CASE WHEN action = 'lock_expired' THEN records ELSE 0 END) AS lock_expired,
               sum(CASE WHEN action = 'release' THEN records ELSE 0 END) AS released
        FROM changed GROUP BY client, group_id, topic HAVING acquired > 0
        ORDER BY redelivered DESC, client, group_id, topic""",
    "share_poison_by_topic": f"""
        WITH p AS (SELECT client, topic, client_id, count(*) AS poison_records
                   FROM {_POISON} GROUP BY ALL),
             r AS (SELECT client, topic, client_id, count(*) AS rejected_records
                   FROM {_OFFSETS.format(where=f"action = 'acknowledge' AND ack_type = {REJECT}")}
                   GROUP BY ALL)
        SELECT coalesce(p.client, r.client) AS client, coalesce(p.topic, r.topic) AS topic,
               coalesce(p.client_id, r.client_id) AS client_id,
               coalesce(poison_records, 0) AS poison_records,
               coalesce(rejected_records, 0) AS rejected_records
        FROM p FULL OUTER JOIN r ON p.client = r.client AND p.topic = r.topic
                                 AND p.client_id = r.client_id
        ORDER BY poison_records DESC, client, topic, client_id""",
    "share_poison_records": f"""
        SELECT client, group_id, topic, partition, first_offset, last_offset, delivery_count,
               client_id, at_ms, count(*) AS records
        FROM {_POISON} GROUP BY ALL
        ORDER BY records DESC, client, group_id, topic, partition, first_offset, at_ms
        LIMIT {POISON_ROWS}""",
}

TITLES = {"share_redeliveries": "Share groups: redeliveries (records, by group and topic)",
          "share_poison_by_topic": "Share groups: poison records (archived at the delivery "
                                   "count limit) and rejected records, by topic and client",
          "share_poison_records": "Share groups: each poison record run"}


def section(results: dict[str, list[dict]]) -> str:
    """The page's "Share groups" section ('' when no run had a share group)."""
    return tables_section("share-groups", "Share groups", TITLES, results)
