"""The report's transaction tables, from the ``transaction_ended`` trace events.

The transaction coordinator puts one ``TransactionEnded`` on the observer seam per completed
transaction (kafka_emu/broker/txn_markers.py): its transactional id, whether it committed, who
ended it (``cause``: ``client`` -- the producer's EndTxn --, ``timeout`` --
transaction.timeout.ms or the control plane's expire --, ``fenced`` -- a new InitProducerId for
the id while it was open --, ``operator`` -- the control plane's abort) and ``duration_ms``
(first partition added to the end; -1 when none was added). Three tables:

- ``per_client``: per run client label and transactional id (a transactional producer *is* its
  id: every life of a copier shares one): transactions, committed, aborted, and the time to
  commit (p50 / p95 / max of committed ones' durations);
- ``abort_causes``: aborted transactions per cause, with how many ids and runs saw them;
- ``commit_percentiles``: p50 / p95 / p99 / max time to commit per run client label.

DataFrame operations only (no UDFs), over the events' explicit schema (``COLUMNS`` are what
``load.py`` must parse besides kind/run); percentiles as the report's others
(``percentile_approx`` at 10,000, exact at these sizes; DuckDB's ``quantile_disc`` in
``DUCKDB_SQL`` gives the same rows). ``section`` renders the tables for the page.
"""

from __future__ import annotations

from typing import Any

from .sections import tables_section

from .load import distinct_count, ordered

KIND = "transaction_ended"
COLUMNS = ("transactional_id", "committed", "cause", "duration_ms")
ACCURACY = 10000

# the tables' columns, to write a table empty without building it when the traces hold
# none of its kind (absent.py); tests/report/test_report_absent.py checks them against
# the built tables'
SCHEMAS = {
    "transactions_per_client": ("client STRING NOT NULL, transactional_id STRING, "
                                "transactions BIGINT NOT NULL, committed BIGINT, aborted BIGINT, "
                                "p50_commit_ms BIGINT, p95_commit_ms BIGINT, max_commit_ms BIGINT"),
    "transaction_abort_causes": ("cause STRING, aborted BIGINT NOT NULL, "
                                 "transactional_ids BIGINT NOT NULL, runs BIGINT NOT NULL"),
    "transaction_commit_percentiles": ("client STRING NOT NULL, committed BIGINT NOT NULL, "
                                       "p50_ms BIGINT, p95_ms BIGINT, p99_ms BIGINT, "
                                       "max_ms BIGINT"),
}


def _F():
    from pyspark.sql import functions as F
    return F


def ended(events: Any, runs: Any) -> Any:
    """The transaction_ended rows with the run's client label ("" without one)."""
    F = _F()
    labels = runs.select("run", F.coalesce(F.col("labels")["client"], F.lit("")).alias("client"))
    return (events.where(F.col("kind") == KIND)
            .select("run", "transactional_id", "committed", "cause", "duration_ms")
            .join(labels, "run", "left")
            .withColumn("client", F.coalesce(F.col("client"), F.lit(""))))


def _commit_ms() -> Any:
    F = _F()
    return F.when(F.col("committed") & (F.col("duration_ms") >= 0), F.col("duration_ms"))


def per_client(ended_df: Any) -> Any:
    F = _F()
    q = F.percentile_approx(_commit_ms(), [0.5, 0.95], ACCURACY)
    return ordered(ended_df.groupBy("client", "transactional_id")
            .agg(F.count(F.lit(1)).alias("transactions"),
                 F.sum(F.when(F.col("committed"), 1).otherwise(0)).alias("committed"),
                 F.sum(F.when(F.col("committed"), 0).otherwise(1)).alias("aborted"),
                 q.alias("q"), F.max(_commit_ms()).alias("max_commit_ms"))
            .select("client", "transactional_id", "transactions", "committed", "aborted",
                    F.col("q")[0].alias("p50_commit_ms"), F.col("q")[1].alias("p95_commit_ms"),
                    "max_commit_ms"), "client", "transactional_id")


def abort_causes(ended_df: Any) -> Any:
    F = _F()
    return ordered(ended_df.where(~F.col("committed"))
                   .groupBy("cause")
                   .agg(F.count(F.lit(1)).alias("aborted"),
                        distinct_count("transactional_id").alias("transactional_ids"),
                        distinct_count("run").alias("runs")),
                   F.col("aborted").desc(), "cause")


def commit_percentiles(ended_df: Any) -> Any:
    F = _F()
    q = F.percentile_approx("duration_ms", [0.5, 0.95, 0.99], ACCURACY)
    return ordered(ended_df.where(F.col("committed") & (F.col("duration_ms") >= 0))
                   .groupBy("client")
                   .agg(F.count(F.lit(1)).alias("committed"), q.alias("q"),
                        F.max("duration_ms").alias("max_ms"))
                   .select("client", "committed", F.col("q")[0].alias("p50_ms"),
                           F.col("q")[1].alias("p95_ms"), F.col("q")[2].alias("p99_ms"),
                           "max_ms"), "client")


def frames(events: Any, runs: Any) -> dict[str, Any]:
    """The three tables as DataFrames (what job.tables() adds to the report's)."""
    e = ended(events, runs)
    return {"transactions_per_client": per_client(e),
            "transaction_abort_causes": abort_causes(e),
            "transaction_commit_percentiles": commit_percentiles(e)}


def tables(events: Any, runs: Any) -> dict[str, list[dict]]:
    """The three tables, collected (small: one row per id, cause or client)."""
    return {name: [r.asDict() for r in df.collect()]
            for name, df in frames(events, runs).items()}


# The same tables in DuckDB over a table ``ended`` (run, client, transactional_id, committed,
# cause, duration_ms): the tests check Spark's rows against these.
DUCKDB_SQL = {
    "transactions_per_client": """
        SELECT client, transactional_id, count(*) AS transactions,
               sum(CASE WHEN committed THEN 1 ELSE 0 END) AS committed,
               sum(CASE WHEN committed THEN 0 ELSE 1 END) AS aborted,
               quantile_disc(CASE WHEN committed AND duration_ms >= 0 THEN duration_ms END, 0.5)
                   AS p50_commit_ms,
               quantile_disc(CASE WHEN committed AND duration_ms >= 0 THEN duration_ms END, 0.95)
                   AS p95_commit_ms,
               max(CASE WHEN committed AND duration_ms >= 0 THEN duration_ms END) AS max_commit_ms
        FROM ended GROUP BY client, transactional_id ORDER BY client, transactional_id""",
    "transaction_abort_causes": """
        SELECT cause, count(*) AS aborted, count(DISTINCT transactional_id) AS transactional_ids,
               count(DISTINCT run) AS runs
        FROM ended WHERE NOT committed GROUP BY cause ORDER BY aborted DESC, cause""",
    "transaction_commit_percentiles": """
        SELECT client, count(*) AS committed, quantile_disc(duration_ms, 0.5) AS p50_ms,
               quantile_disc(duration_ms, 0.95) AS p95_ms,
               quantile_disc(duration_ms, 0.99) AS p99_ms, max(duration_ms) AS max_ms
        FROM ended WHERE committed AND duration_ms >= 0 GROUP BY client ORDER BY client""",
}

TITLES = {"transactions_per_client": "Transactions per client (transactional id)",
          "transaction_abort_causes": "Aborted transactions by cause",
          "transaction_commit_percentiles": "Time to commit (ms, first partition added to "
                                            "the end)"}


def section(results: dict[str, list[dict]]) -> str:
    """The page's "Transactions" section ('' when no run had a transaction)."""
    return tables_section("transactions", "Transactions", TITLES, results)
