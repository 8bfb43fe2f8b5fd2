"""Shared pieces of the MySQL CDC tests: a database per test on the session's MariaDB with the
binlog on (``mariadb_binlog`` in conftest), and a stand-in for the worker that drives a task
as the runtime does (poll, store offsets in order, commit; ``workers`` holds a test's)."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pymysql
import pytest

from broker.server import EmbeddedBroker
from connect.api import SourceRecord
from connect.storage.offsets import MemoryOffsetBackingStore
from connectors.jdbc.mysql.task import MySqlSourceTask
from tests.connectors.jdbc.test_cdc_support import TaskDriver
from tests.databases import MariaDBServer
from tests.support import unique

_server_ids = itertools.count(100)


class BinlogDatabase:
    """One test's database on the shared server."""

    def __init__(self, server: MariaDBServer) -> None:
        self.server = server
        self.name = unique("cdc").replace("-", "_")
        self.run(f"CREATE DATABASE {self.name}", database=None)

    def connect(self, database: str | None = "") -> Any:
        return pymysql.connect(
            host="127.0.0.1",
            port=self.server.port,
            user="root",
            database=self.name if database == "" else database,
            autocommit=True,
            charset="utf8mb4",
        )

    def run(self, *statements: str, database: str | None = "") -> None:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                for sql in statements:
                    cur.execute(sql)
        finally:
            conn.close()

    def transaction(self, *statements: str) -> None:
        conn = self.connect()
        try:
            conn.begin()
            with conn.cursor() as cur:
                for sql in statements:
                    cur.execute(sql)
            conn.commit()
        finally:
            conn.close()

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(query)
                return list(cur.fetchall())
        finally:
            conn.close()

    def config(self, prefix: str, bootstrap: str, **settings: str) -> dict[str, str]:
        config = {
            "database.hostname": "127.0.0.1",
            "database.port": str(self.server.port),
            "database.user": "root",
            "database.password": "",
            "database.server.id": str(next(_server_ids)),
            "topic.prefix": prefix,
            "database.include.list": self.name,
            "schema.history.internal.kafka.topic": f"history.{prefix}",
            "schema.history.internal.kafka.bootstrap.servers": bootstrap,
            "poll.interval.ms": "200",
            "retriable.restart.connector.wait.ms": "1000",
        }
        config.update({k.replace("_", "."): v for k, v in settings.items()})
        return config

    def drop(self) -> None:
        with contextlib.suppress(pymysql.err.OperationalError):  # a test restarted the server
            self.run(f"DROP DATABASE IF EXISTS {self.name}", database=None)


@pytest.fixture
def binlog_db(mariadb_binlog: MariaDBServer) -> Iterator[BinlogDatabase]:
    db = BinlogDatabase(mariadb_binlog)
    yield db
    db.drop()


def start(
    db: BinlogDatabase,
    broker: EmbeddedBroker,
    workers: list[Worker],
    task: type = MySqlSourceTask,
    **settings: str,
) -> Worker:
    """A worker running ``task`` on ``db`` with its own topic prefix and schema history."""
    config = db.config(unique("srv").replace("-", "_"), broker.bootstrap, **settings)
    worker = Worker(task(), config)
    workers.append(worker)
    return worker


def restart(worker: Worker, workers: list[Worker], **settings: str) -> Worker:
    """A new task with the same config and offsets (the old one stopped)."""
    worker.stop()
    workers.remove(worker)
    config = {**worker.config, **{k.replace("_", "."): v for k, v in settings.items()}}
    again = Worker(type(worker.task)(), config, worker.store)
    workers.append(again)
    return again


class Worker(TaskDriver):
    """A MySQL/MariaDB task's worker: polls, acknowledges, stores offsets in order."""

    task: MySqlSourceTask

    def __init__(
        self, task: MySqlSourceTask, config: dict[str, str], store: MemoryOffsetBackingStore | None = None
    ) -> None:
        super().__init__(task, "mysql", config, store)

    def poll(self) -> list[SourceRecord]:
        return list(self.task.poll() or [])

    def poll_until(self, predicate: Any, timeout: float = 30, retriable: bool = False) -> list[SourceRecord]:
        """Records polled until ``predicate(records)`` holds; RetriableExceptions are ridden
        out when ``retriable`` (the worker retries after them)."""
        from connect.api import RetriableException

        out: list[SourceRecord] = []
        deadline = time.monotonic() + timeout
        while not predicate(out):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"condition not met after {len(out)} records: {[brief(r) for r in out][-20:]}"
                )
            try:
                out.extend(self.task.poll() or [])
            except RetriableException:
                if not retriable:
                    raise
                time.sleep(0.2)
        return out

    def streaming(self, timeout: float = 30) -> list[SourceRecord]:
        """Polls until the task reads the binlog (its snapshot, if any, is done)."""
        out: list[SourceRecord] = []
        deadline = time.monotonic() + timeout
        while self.task.phase.value != "streaming":
            assert time.monotonic() < deadline, "the task did not start streaming"
            out.extend(self.task.poll() or [])
        return out

    def count(self, n: int, timeout: float = 30, retriable: bool = False) -> list[SourceRecord]:
        return self.poll_until(lambda out: len(data(out)) >= n, timeout, retriable)

    def acknowledge(self, record: SourceRecord) -> None:
        assert record.source_partition is not None and record.source_offset is not None
        self.writer.write([(record.source_partition, record.source_offset)])
        self.task.commit()


def data(records: list[SourceRecord]) -> list[SourceRecord]:
    """Change events and tombstones (no schema changes, heartbeats)."""
    return [r for r in records if r.topic.count(".") >= 2 and not r.topic.startswith("__debezium")]


def brief(record: SourceRecord) -> tuple[Any, ...]:
    key = record.key.get("id") if record.key is not None and hasattr(record.key, "get") else record.key
    if record.value is None:
        return ("tombstone", key)
    value = record.value
    try:
        return (value.get("op"), key, value.get("source").get("snapshot"))
    except Exception:
        return (record.topic, key)


def offset(record: SourceRecord) -> Mapping[str, Any]:
    assert record.source_offset is not None
    return record.source_offset


def row(record: SourceRecord, which: str = "after") -> dict[str, Any] | None:
    value = record.value.get(which)
    if value is None:
        return None
    return {f.name: value.get(f.name) for f in value.schema.fields}
