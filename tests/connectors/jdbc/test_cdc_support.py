"""Shared by the CDC tests: a fresh PostgreSQL database per test, reading Debezium events, and
what both CDC connectors' tests use: the connectors a test runs on a worker, and a stand-in
for the worker that drives one task directly (``TaskDriver``, the ``workers`` fixture).

No tests here. ``CdcDatabase`` owns one database on a throwaway server (the session's
``postgres`` fixture or a test's own ``PostgresServer``); closing it drops the
replication slots left in it and the database itself.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from connect.api import SourceTask
from connect.runtime.source_task import _SourceTaskContext
from connect.storage.offsets import ConnectorOffsetReader, MemoryOffsetBackingStore, OffsetStorageWriter
from sluiceway.embedded import EmbeddedConnect
from tests.databases import PostgresServer
from tests.support import unique

# The throwaway servers commit asynchronously; logical decoding only sees flushed WAL, so
# the tests' own writes commit synchronously to be decodable at once.
_SYNC = "-c synchronous_commit=on"


class CdcDatabase:
    """One database of its own: ``run`` executes SQL (autocommit), ``rows`` queries."""

    def __init__(self, server: PostgresServer, name: str | None = None) -> None:
        self.server = server
        self.name = name or unique("cdc").replace("-", "_")
        server.execute(f"CREATE DATABASE {self.name}")

    @property
    def dsn(self) -> str:
        return self.server.dsn(self.name)

    def config(self, prefix: str, **settings: str) -> dict[str, str]:
        """The connector settings that reach this database (plus ``settings``, dots as underscores)."""
        return {
            "database.hostname": self.server.host,
            "database.port": str(self.server.port),
            "database.user": self.server.USER,
            "database.dbname": self.name,
            "topic.prefix": prefix,
            "slot.name": f"slot_{uuid.uuid4().hex[:12]}",
            "poll.interval.ms": "50",
            "status.update.interval.ms": "500",
            **{k.replace("_", "."): v for k, v in settings.items()},
        }

    def run(self, *statements: str) -> None:
        """Each statement in its own transaction (autocommit)."""
        with psycopg.connect(self.dsn, autocommit=True, options=_SYNC) as conn:
            for statement in statements:
                conn.execute(statement)

    def transaction(self, *statements: str) -> None:
        """All statements in one transaction."""
        with psycopg.connect(self.dsn, options=_SYNC) as conn, conn.transaction():
            for statement in statements:
                conn.execute(statement)

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.dsn, autocommit=True, options=_SYNC) as conn:
            return list(conn.execute(query).fetchall())

    def value(self, query: str) -> Any:
        return self.rows(query)[0][0]

    def slot(self, name: str) -> dict[str, Any] | None:
        found = self.rows(
            f"SELECT active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '{name}'"
        )
        return {"active": found[0][0], "confirmed_flush_lsn": found[0][1]} if found else None

    def wait_slot_inactive(self, name: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            slot = self.slot(name)
            if slot is None or not slot["active"]:
                return
            time.sleep(0.05)
        raise AssertionError(f"slot {name} still active after {timeout} s")

    def drop(self) -> None:
        deadline = time.monotonic() + 15
        while True:
            try:
                self.server.execute(
                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                    f"WHERE database = '{self.name}' AND active_pid IS NOT NULL"
                )
                self.server.execute(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    f"WHERE database = '{self.name}' AND NOT active"
                )
                self.server.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
                return
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


@pytest.fixture
def cdc_db(postgres: PostgresServer) -> Iterator[CdcDatabase]:
    db = CdcDatabase(postgres)
    try:
        yield db
    finally:
        db.drop()


def lsn(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


class TopicReader:
    """Reads a topic from the start, keeping what it read: ``until`` waits for a record."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("cdc-test"), "enable.auto.commit": False}
        )
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self.events: list[Event] = []

    def until(self, predicate: Callable[[Event], bool], timeout: float = 30) -> list[Event]:
        """Everything read so far up to and including the first event that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        checked = 0
        while True:
            for i in range(checked, len(self.events)):
                if predicate(self.events[i]):
                    return self.events[: i + 1]
            checked = len(self.events)
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no matching event on {self.topic} within {timeout} s; read {len(self.events)}: "
                    + "; ".join(map(str, self.events[-10:]))
                )
            for m in self.consumer.consume(500, 0.2):
                if m.error() is None:
                    self.events.append(Event.of(m))

    def count(self, n: int, timeout: float = 30) -> list[Event]:
        self.until(lambda _e: len(self.events) >= n, timeout)
        return self.events[:n]

    def settle(self, quiet: float = 0.7) -> list[Event]:
        """Everything, once nothing more arrived for ``quiet`` seconds."""
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < quiet:
            got = [m for m in self.consumer.consume(500, 0.1) if m.error() is None]
            if got:
                self.events.extend(Event.of(m) for m in got)
                idle_since = time.monotonic()
        return self.events

    def close(self) -> None:
        self.consumer.close()


class Event:
    """One record as JsonConverter (schemas enabled) wrote it: schemas and payloads parsed."""

    def __init__(
        self,
        key: Any,
        key_schema: Any,
        value: Any,
        value_schema: Any,
        headers: dict[str, Any],
        timestamp: int,
    ) -> None:
        self.key = key
        self.key_schema = key_schema
        self.value = value
        self.value_schema = value_schema
        self.headers = headers
        self.timestamp = timestamp

    @classmethod
    def of(cls, message: Any) -> Event:
        key = json.loads(message.key()) if message.key() is not None else None
        value = json.loads(message.value()) if message.value() is not None else None
        headers = {k: v for k, v in (message.headers() or [])}
        return cls(
            key["payload"] if key else None,
            key["schema"] if key else None,
            value["payload"] if value else None,
            value["schema"] if value else None,
            headers,
            message.timestamp()[1],
        )

    @property
    def op(self) -> str | None:
        return self.value["op"] if self.value else None

    @property
    def source(self) -> dict[str, Any]:
        assert self.value is not None
        return dict(self.value["source"])

    @property
    def row(self) -> dict[str, Any] | None:
        """``after``, or ``before`` for deletes."""
        if self.value is None:
            return None
        return dict(self.value["after"] or self.value["before"] or {})

    def brief(self) -> tuple[Any, ...]:
        """(op, key, before, after, snapshot): what a test of event sequences compares."""
        if self.value is None:
            return ("tombstone", self.key)
        return (
            self.op,
            self.key,
            self.value["before"],
            self.value["after"],
            self.value["source"]["snapshot"],
        )

    def __repr__(self) -> str:
        return f"Event{self.brief()}"


class Connectors:
    """Connectors and topic readers of one test on a shared worker, removed afterwards (before
    its database). Subclasses add a ``start`` that builds their connector's config."""

    def __init__(self, connect: EmbeddedConnect) -> None:
        self.connect = connect
        self.names: list[str] = []
        self.readers: list[TopicReader] = []

    def create(self, name: str, config: dict[str, str]) -> None:
        self.connect.create_connector(name, config)
        self.names.append(name)

    def reader(self, topic: str) -> TopicReader:
        reader = TopicReader(self.connect.bootstrap, topic)
        self.readers.append(reader)
        return reader

    def wait_failed(self, name: str, timeout: float = 30) -> str:
        """The FAILED task's trace."""
        status: dict[str, Any] = {}

        def failed() -> bool:
            nonlocal status
            status = self.connect.status(name)
            return any(t["state"] == "FAILED" for t in status.get("tasks", []))

        self.connect.wait_for(failed, timeout, f"{name} to fail")
        return str(status["tasks"][0]["trace"])

    def close(self) -> None:
        for reader in self.readers:
            reader.close()
        for name in self.names:
            self.connect.request("DELETE", f"/connectors/{name}")
        for name in self.names:
            self.connect.wait_for(functools.partial(self._gone, name), 30, f"{name} to be deleted")

    def _gone(self, name: str) -> bool:
        return bool(self.connect.request("GET", f"/connectors/{name}/status").status_code == 404)


class TaskDriver:
    """Plays the worker's part for one task, with the runtime's own task context and offset
    store: starts it, stores offsets in order (``writer``), stops it. Subclasses poll."""

    def __init__(
        self,
        task: SourceTask,
        connector: str,
        config: dict[str, str],
        store: MemoryOffsetBackingStore | None = None,
    ) -> None:
        self.config = config
        self.store = store or MemoryOffsetBackingStore()
        self.writer = OffsetStorageWriter(self.store, connector)
        self.task = task
        self.task.initialize(_SourceTaskContext(config, ConnectorOffsetReader(self.store, connector)))
        self.task.start(config)

    def stop(self) -> None:
        self.task.stop()


@pytest.fixture
def workers() -> Iterator[list[TaskDriver]]:
    """The test's task drivers, stopped after it."""
    made: list[TaskDriver] = []
    yield made
    for w in made:
        w.stop()
