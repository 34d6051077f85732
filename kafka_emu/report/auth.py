"""The report's authentication tables: failed logins and denied requests, from the traces.

The SASL authenticator at the connection (kafka_emu/security/sasl.py; tls.py for a failed TLS
handshake) puts an ``AuthenticationFailed`` on the observer seam for every failed login -- its
listener, mechanism, the user the client named (when the mechanism says: PLAIN, SCRAM), the
error and Kafka's reason, including a login failed by a fault rule ("fault rule N: ...") --
and the authorizer (security/authorize.py) an ``AuthorizationDenied`` for every denial: the
principal, the API, the ACL operation and the resource (type and name; no name when the check
was on any resource of the type). Two tables:

- ``failed_logins``: per listener, mechanism, user, error code and reason: failed logins, how
  many were re-authentications (KIP-368), distinct client addresses and runs;
- ``denied_requests``: per principal, API, operation, resource and error code: denials, distinct
  client ids and runs -- who was refused what.

DataFrame operations only (no UDFs) over the events' explicit schema (``COLUMNS`` are what
``load.py`` must parse besides kind/run). A missing mechanism or user (a TLS handshake, an
unparsable first token) is "" and a missing resource name "(any)", so both engines order the
rows alike; ``DUCKDB_SQL`` gives the same rows. ``section`` renders them for the page.
"""

from __future__ import annotations

import html
from typing import Any

from .load import distinct_count, ordered
from .sections import tables_section

FAILED, DENIED = "authentication_failed", "authorization_denied"
COLUMNS = ("listener", "mechanism", "user", "reauthentication", "error_code", "reason", "peer",
           "principal", "api", "operation", "resource_type", "resource_name", "client_id")
ANY_RESOURCE = "(any)"

# the tables' columns, to write a table empty without building it when the traces hold
# none of its kind (absent.py); tests/report/test_report_absent.py checks them against
# the built tables'
SCHEMAS = {
    "failed_logins": ("listener STRING, mechanism STRING NOT NULL, user STRING NOT NULL, "
                      "error_code BIGINT, reason STRING, failed BIGINT NOT NULL, "
                      "reauthentications BIGINT, peers BIGINT NOT NULL, "
                      "runs BIGINT NOT NULL"),
    "denied_requests": ("principal STRING, api STRING, operation STRING, "
                        "resource_type STRING, resource_name STRING NOT NULL, "
                        "error_code BIGINT, denied BIGINT NOT NULL, "
                        "client_ids BIGINT NOT NULL, runs BIGINT NOT NULL"),
}


def _F():
    from pyspark.sql import functions as F
    return F


def failed_logins(events: Any) -> Any:
    F = _F()
    return (events.where(F.col("kind") == FAILED)
            .select("run", "listener", F.coalesce("mechanism", F.lit("")).alias("mechanism"),
                    F.coalesce("user", F.lit("")).alias("user"), "error_code", "reason",
                    "reauthentication", "peer")
            .groupBy("listener", "mechanism", "user", "error_code", "reason")
            .agg(F.count(F.lit(1)).alias("failed"),
                 F.sum(F.when(F.col("reauthentication"), 1).otherwise(0))
                 .alias("reauthentications"),
                 distinct_count("peer").alias("peers"), distinct_count("run").alias("runs"))
            .transform(ordered, F.col("failed").desc(), "listener", "mechanism", "user",
                       "error_code", "reason"))


def denied_requests(events: Any) -> Any:
    F = _F()
    return (events.where(F.col("kind") == DENIED)
            .select("run", "principal", "api", "operation", "resource_type",
                    F.coalesce("resource_name", F.lit(ANY_RESOURCE)).alias("resource_name"),
                    "error_code", "client_id")
            .groupBy("principal", "api", "operation", "resource_type", "resource_name",
                     "error_code")
            .agg(F.count(F.lit(1)).alias("denied"),
                 distinct_count("client_id").alias("client_ids"),
                 distinct_count("run").alias("runs"))
            .transform(ordered, "principal", F.col("denied").desc(), "api", "operation",
                       "resource_type", "resource_name", "error_code"))


def tables(events: Any, runs: Any = None) -> dict[str, list[dict]]:
    """Both tables, collected (small: one row per distinct failure or denial). ``runs`` is
    accepted for the job's common call and not needed."""
    return {name: [r.asDict() for r in fn(events).collect()]
            for name, fn in (("failed_logins", failed_logins),
                             ("denied_requests", denied_requests))}


# The same tables in DuckDB over tables ``failed`` (run, listener, mechanism, user, error_code,
# reason, reauthentication, peer) and ``denied`` (run, principal, api, operation, resource_type,
# resource_name, error_code, client_id): the tests check Spark's rows against these.
DUCKDB_SQL = {
    "failed_logins": """
        SELECT listener, coalesce(mechanism, '') AS mechanism, coalesce("user", '') AS "user",
               error_code, reason, count(*) AS failed,
               sum(CASE WHEN reauthentication THEN 1 ELSE 0 END) AS reauthentications,
               count(DISTINCT peer) AS peers, count(DISTINCT run) AS runs
        FROM failed GROUP BY ALL
        ORDER BY failed DESC, listener, mechanism, "user", error_code, reason""",
    "denied_requests": f"""
        SELECT principal, api, operation, resource_type,
               coalesce(resource_name, '{ANY_RESOURCE}') AS resource_name, error_code,
               count(*) AS denied, count(DISTINCT client_id) AS client_ids,
               count(DISTINCT run) AS runs
        FROM denied GROUP BY ALL
        ORDER BY principal, denied DESC, api, operation, resource_type, resource_name,
                 error_code""",
}

TITLES = {"failed_logins": "Failed logins (by listener, mechanism, user and reason)",
          "denied_requests": "Denied requests by principal (API, ACL operation, resource)"}


def _cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column == "error_code":
        from ..errors import ErrorCode
        try:
            return html.escape(f"{ErrorCode(value).name} ({value})")
        except ValueError:
            return html.escape(str(value))  # -1: a TLS handshake, no Kafka code
    return html.escape(str(value))


def section(results: dict[str, list[dict]]) -> str:
    """The page's "Authentication" section ('' when no login failed and nothing was denied)."""
    return tables_section("authentication", "Authentication and authorization", TITLES, results, _cell)
