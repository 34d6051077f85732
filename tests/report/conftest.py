"""One SparkSession for every report test (starting Spark costs tens of seconds), and one run of
the whole job over the hand-built traces, shared by the tests that read its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import traces


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from kafka_emu.report.spark import session
    logs = tmp_path_factory.mktemp("spark-logs")
    spark = session(master="local[2]", log_dir=logs, shuffle_partitions=2)
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def fixture_traces(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("traces")
    traces.build(root)
    return root


@pytest.fixture(scope="session")
def report(spark, fixture_traces, tmp_path_factory):
    """(results, out dir) of the job over every fixture run, with CSV."""
    from kafka_emu.report import job
    out = tmp_path_factory.mktemp("report")
    results = job.run(spark, [str(fixture_traces)], out, csv=True)
    return results, out
