"""The Spark sink when things go wrong: failed writes retried or failing the task without
losing or duplicating a record, a crash between commit and publish rolled forward, a
zombie's commit fenced off, a missing Java named."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from connect.api import Schema, TopicPartition
from sluiceway.embedded import EmbeddedConnect
from spark_sink.hadoop_fs import HadoopFs
from spark_sink.session import java_problem
from spark_sink.table_log import STAGING, FencedException, Manifest, TableLog, manifest_path
from tests.spark_sink.test_sink import produce_values, sink_config, wait_rows
from tests.support import unique


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("spark-faults")) as c:
        yield c


def block_staging(table: Path, connector: str) -> Path:
    """Make the task's staging directory a file: Spark's next write into it fails."""
    owner = table / STAGING / f"{connector}-0"
    shutil.rmtree(owner, ignore_errors=True)
    owner.parent.mkdir(parents=True, exist_ok=True)
    owner.write_text("in the way")
    return owner


def values_in(spark: SparkSession, table: Path) -> list[int]:
    return sorted(r["value"] for r in spark.read.parquet(str(table)).collect())


def test_a_failed_write_is_retried_and_then_lands_once(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    topic, table, name = unique("retry"), tmp_path / "retry", unique("spark")
    connect.create_connector(
        name, sink_config(topic, table, **{"max.retries": "50", "retry.backoff.ms": "100"})
    )
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(100)))
    wait_rows(connect, spark, table, 100)
    blocker = block_staging(table, name)
    with caplog.at_level(logging.WARNING, logger="spark_sink.connector"):
        produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(100, 200)))
        connect.wait_for(lambda: "failed (attempt 2)" in caplog.text, what="two failed attempts")
    blocker.unlink()
    wait_rows(connect, spark, table, 200)
    assert values_in(spark, table) == list(range(200))
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"


def test_a_write_failing_for_good_fails_the_task_and_a_restart_loses_nothing(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    topic, table, name = unique("broken"), tmp_path / "broken", unique("spark")
    connect.create_connector(
        name, sink_config(topic, table, **{"max.retries": "1", "retry.backoff.ms": "50"})
    )
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(100)))
    wait_rows(connect, spark, table, 100)
    blocker = block_staging(table, name)
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(100, 300)))
    connect.wait_for(lambda: connect.status(name)["tasks"][0]["state"] == "FAILED", timeout=60, what="FAILED")
    trace = connect.status(name)["tasks"][0]["trace"]
    assert "failed 2 times; nothing of them was committed" in trace
    assert "ParentNotDirectoryException: Parent path is not a directory" in trace
    assert "\tat org.apache" not in trace  # the cause, not the JVM's stack
    assert values_in(spark, table) == list(range(100))
    blocker.unlink()
    assert connect.request("POST", f"/connectors/{name}/tasks/0/restart").status_code in (200, 202, 204)
    wait_rows(connect, spark, table, 300)
    assert values_in(spark, table) == list(range(300))


def test_a_commit_whose_publish_was_cut_short_is_rolled_forward(
    connect: EmbeddedConnect, spark: SparkSession, tmp_path: Path
) -> None:
    """The crash between manifest and rename, made by hand: a staged file and its manifest
    exist, the file is not in the table yet. The task opening the partition finishes the
    publish and resumes after the manifest's range."""
    topic, table = unique("rollforward"), tmp_path / "rollforward"
    staged_dir = table / STAGING / "crashed-0" / "batch1"
    spark.createDataFrame([(i,) for i in range(50)], "value BIGINT").coalesce(1).write.parquet(
        str(staged_dir)
    )
    (staged,) = [p for p in os.listdir(staged_dir) if p.startswith("part-")]
    tp = TopicPartition(topic, 0)
    final = f"part-{topic}+0+{0:020d}+{49:020d}-00000.snappy.parquet"
    manifest = Manifest(tp, 0, 49, ((f"{STAGING}/crashed-0/batch1/{staged}", final),), "")
    TableLog(HadoopFs(spark, str(table))).commit(manifest)
    assert not (table / final).exists()
    # The topic holds the same 50 records and 30 more; only the 30 are new to the table.
    produce_values(connect, topic, Schema.INT64_SCHEMA, list(range(80)))
    connect.create_connector(unique("spark"), sink_config(topic, table))
    wait_rows(connect, spark, table, 80)
    assert (table / final).exists()
    assert values_in(spark, table) == list(range(80))


def test_two_writers_of_one_range_only_one_commits(spark: SparkSession, tmp_path: Path) -> None:
    log = TableLog(HadoopFs(spark, str(tmp_path / "fenced")))
    tp = TopicPartition("t", 3)
    log.commit(Manifest(tp, 100, 199, ()))
    with pytest.raises(FencedException, match="already committed"):
        log.commit(Manifest(tp, 100, 149, ()))
    assert (tmp_path / "fenced" / manifest_path(tp, 100)).exists()
    assert log.recover(tp) == 199


def test_java_problems_say_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert java_problem() is None  # this machine has Java 17
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert "has no bin/java" in (java_problem() or "")
    old = tmp_path / "old-jdk"
    (old / "bin").mkdir(parents=True)
    (old / "bin" / "java").write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_392\"' >&2\n")
    (old / "bin" / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(old))
    problem = java_problem() or ""
    assert "is Java 8" in problem and "openjdk-17-jre-headless" in problem
