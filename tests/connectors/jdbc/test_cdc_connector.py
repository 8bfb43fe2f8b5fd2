"""PostgresCdcSourceConnector end to end: a real worker and broker (EmbeddedConnect), a real
PostgreSQL with wal_level=logical, events read back as the JsonConverter (schemas enabled)
wrote them, and compared with what Debezium emits.

One worker serves the module; each test has its own database, slot, connector name and
topic prefix. Where a test must show that nothing arrived twice it writes a *fence* row
last and reads up to it: a duplicate would come before the fence.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.connectors.jdbc.test_cdc_support import CdcDatabase, Connectors, Event, cdc_db, lsn
from tests.databases import PostgresServer, ServerUnavailable
from tests.support import unique

FIXTURES = (cdc_db,)
CLASS = "io.debezium.connector.postgresql.PostgresConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("cdc-worker"), {"offset.flush.interval.ms": "200"}) as c:
        yield c


class Cdc(Connectors):
    """The PostgreSQL connectors of one test."""

    def start(self, db: CdcDatabase, **settings: str) -> tuple[str, str]:
        """A connector on ``db``; returns (connector name, topic prefix)."""
        name = unique("cdc")
        prefix = name.replace("-", "_")
        config = {
            "connector.class": CLASS,
            "key.converter": JSON,
            "value.converter": JSON,
            "retriable.restart.connector.wait.ms": "1000",
            "slot.retry.delay.ms": "300",
            **db.config(prefix, **settings),
        }
        self.create(name, config)
        return name, prefix


@pytest.fixture
def cdc(connect: EmbeddedConnect, cdc_db: CdcDatabase) -> Iterator[Cdc]:
    made = Cdc(connect)
    yield made
    made.close()


def ops(events: list[Event]) -> list[tuple[Any, ...]]:
    return [e.brief() for e in events]


def field_schemas(schema: dict[str, Any]) -> list[tuple[str, str, bool, str | None]]:
    return [(f["field"], f["type"], f["optional"], f.get("name")) for f in schema["fields"]]


# -- the events ------------------------------------------------------------------------------------------


def test_snapshot_then_changes_as_debezium_events(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run(
        "CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, price numeric(8,2), added date)",
        "INSERT INTO items (name, price, added) VALUES ('pen', 1.50, '2024-05-01'), ('ink', NULL, NULL)",
    )
    name, prefix = cdc.start(cdc_db)
    topic = cdc.reader(f"{prefix}.public.items")
    snapshot = topic.count(2)
    assert ops(snapshot) == [
        ("r", {"id": 1}, None, {"id": 1, "name": "pen", "price": "AJY=", "added": 19844}, "true"),
        ("r", {"id": 2}, None, {"id": 2, "name": "ink", "price": None, "added": None}, "last"),
    ]
    cdc_db.run("INSERT INTO items (name) VALUES ('cap')")
    cdc_db.run("UPDATE items SET price = 2 WHERE id = 1")
    cdc_db.run("DELETE FROM items WHERE id = 2")
    cdc_db.transaction(
        "INSERT INTO items (name) VALUES ('nib')",
        "UPDATE items SET name = 'big nib' WHERE id = 4",
        "DELETE FROM items WHERE id = 3",
    )
    events = topic.until(lambda e: e.op == "d" and e.key == {"id": 3})[2:]
    assert ops(events) == [
        ("c", {"id": 3}, None, {"id": 3, "name": "cap", "price": None, "added": None}, "false"),
        ("u", {"id": 1}, None, {"id": 1, "name": "pen", "price": "AMg=", "added": 19844}, "false"),
        ("d", {"id": 2}, {"id": 2, "name": "", "price": None, "added": None}, None, "false"),
        ("tombstone", {"id": 2}),
        ("c", {"id": 4}, None, {"id": 4, "name": "nib", "price": None, "added": None}, "false"),
        ("u", {"id": 4}, None, {"id": 4, "name": "big nib", "price": None, "added": None}, "false"),
        ("d", {"id": 3}, {"id": 3, "name": "", "price": None, "added": None}, None, "false"),
    ]
    assert ops(topic.count(10)[-1:]) == [("tombstone", {"id": 3})]
    # The last transaction: one txId and commit time, LSNs in order, sequence = [last commit, lsn].
    sources = [e.source for e in events[-3:]]
    assert len({s["txId"] for s in sources}) == 1 and len({s["ts_ms"] for s in sources}) == 1
    assert [s["lsn"] for s in sources] == sorted(s["lsn"] for s in sources)
    assert sources[0]["sequence"].startswith('["') and sources[0]["sequence"].endswith(
        f'"{sources[0]["lsn"]}"]'
    )
    assert {k: sources[0][k] for k in ("connector", "name", "db", "schema", "table", "xmin")} == {
        "connector": "postgresql",
        "name": prefix,
        "db": cdc_db.name,
        "schema": "public",
        "table": "items",
        "xmin": None,
    }
    # The schemas, field by field as Debezium 2.x writes them.
    first = snapshot[0]
    assert first.key_schema == {
        "type": "struct",
        "fields": [{"type": "int32", "optional": False, "field": "id"}],
        "optional": False,
        "name": f"{prefix}.public.items.Key",
    }
    envelope = first.value_schema
    assert (envelope["name"], envelope["version"], envelope["optional"]) == (
        f"{prefix}.public.items.Envelope",
        1,
        False,
    )
    assert [f["field"] for f in envelope["fields"]] == [
        "before",
        "after",
        "source",
        "transaction",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
    ]
    value = envelope["fields"][1]
    assert value["name"] == f"{prefix}.public.items.Value" and value["optional"] is True
    assert field_schemas(value) == [
        ("id", "int32", False, None),
        ("name", "string", False, None),
        ("price", "bytes", True, "org.apache.kafka.connect.data.Decimal"),
        ("added", "int32", True, "io.debezium.time.Date"),
    ]
    assert value["fields"][2]["parameters"] == {"scale": "2", "connect.decimal.precision": "8"}
    source = envelope["fields"][2]
    assert source["name"] == "io.debezium.connector.postgresql.Source"
    assert field_schemas(source) == [
        ("version", "string", False, None),
        ("connector", "string", False, None),
        ("name", "string", False, None),
        ("ts_ms", "int64", False, None),
        ("snapshot", "string", True, "io.debezium.data.Enum"),
        ("db", "string", False, None),
        ("sequence", "string", True, None),
        ("ts_us", "int64", True, None),
        ("ts_ns", "int64", True, None),
        ("schema", "string", False, None),
        ("table", "string", False, None),
        ("txId", "int64", True, None),
        ("lsn", "int64", True, None),
        ("xmin", "int64", True, None),
    ]
    assert source["fields"][4]["parameters"] == {"allowed": "true,last,false,incremental"}
    assert source["fields"][4]["default"] == "false"
    assert cdc.connect.status(name)["tasks"][0]["state"] == "RUNNING"


def test_replica_identity_full_key_changes_toast_and_truncate(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run(
        "CREATE TABLE accounts (id int PRIMARY KEY, owner text, balance int)",
        "ALTER TABLE accounts REPLICA IDENTITY FULL",
        "CREATE TABLE docs (id int PRIMARY KEY, title text, body text)",
        "ALTER TABLE docs ALTER body SET STORAGE EXTERNAL",
    )
    _, prefix = cdc.start(cdc_db, snapshot_mode="no_data", skipped_operations="none")
    accounts = cdc.reader(f"{prefix}.public.accounts")
    docs = cdc.reader(f"{prefix}.public.docs")
    wait_slot(cdc, cdc_db)  # no_data streams what happens after the slot's creation
    cdc_db.run("INSERT INTO accounts VALUES (1, 'ann', 10)")
    cdc_db.run("UPDATE accounts SET balance = 20 WHERE id = 1")
    cdc_db.run("UPDATE accounts SET id = 2 WHERE id = 1")
    cdc_db.run("DELETE FROM accounts WHERE id = 2")
    cdc_db.run("TRUNCATE accounts")
    events = accounts.until(lambda e: e.op == "t")
    assert ops(events) == [
        ("c", {"id": 1}, None, {"id": 1, "owner": "ann", "balance": 10}, "false"),
        (
            "u",
            {"id": 1},
            {"id": 1, "owner": "ann", "balance": 10},
            {"id": 1, "owner": "ann", "balance": 20},
            "false",
        ),
        ("d", {"id": 1}, {"id": 1, "owner": "ann", "balance": 20}, None, "false"),
        ("tombstone", {"id": 1}),
        ("c", {"id": 2}, None, {"id": 2, "owner": "ann", "balance": 20}, "false"),
        ("d", {"id": 2}, {"id": 2, "owner": "ann", "balance": 20}, None, "false"),
        ("tombstone", {"id": 2}),
        ("t", None, None, None, "false"),
    ]
    assert events[2].headers["__debezium.newkey"] is not None
    assert events[4].headers["__debezium.oldkey"] is not None
    big = "".join(f"{i:08d}" for i in range(20_000))
    cdc_db.run(f"INSERT INTO docs VALUES (1, 'a', '{big}')", "UPDATE docs SET title = 'b' WHERE id = 1")
    changed = docs.count(2)
    assert changed[0].value["after"]["body"] == big
    assert changed[1].value["after"] == {"id": 1, "title": "b", "body": "__debezium_unavailable_value"}


def cdc_db_slot(db: CdcDatabase) -> str:
    return str(db.value(f"SELECT slot_name FROM pg_replication_slots WHERE database = '{db.name}'"))


def wait_slot(cdc: Cdc, db: CdcDatabase) -> None:
    query = f"SELECT 1 FROM pg_replication_slots WHERE database = '{db.name}'"
    cdc.connect.wait_for(lambda: db.rows(query) != [], 20, "the replication slot")


def test_a_new_column_reaches_the_schema_of_later_events(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY, a text)", "INSERT INTO t VALUES (1, 'x')")
    _, prefix = cdc.start(cdc_db)
    topic = cdc.reader(f"{prefix}.public.t")
    topic.count(1)
    cdc_db.run("INSERT INTO t VALUES (2, 'y')")
    cdc_db.run("ALTER TABLE t ADD COLUMN b int NOT NULL DEFAULT 7", "INSERT INTO t VALUES (3, 'z', 9)")
    cdc_db.run("UPDATE t SET a = 'w' WHERE id = 1")
    events = topic.count(4)
    assert [e.value["after"] for e in events] == [
        {"id": 1, "a": "x"},
        {"id": 2, "a": "y"},
        {"id": 3, "a": "z", "b": 9},
        {"id": 1, "a": "w", "b": 7},
    ]
    after = events[3].value_schema["fields"][1]
    assert field_schemas(after)[-1] == ("b", "int32", False, None)


def test_values_of_many_types_are_the_same_from_the_snapshot_and_the_stream(
    cdc: Cdc, cdc_db: CdcDatabase
) -> None:
    cdc_db.run(
        "CREATE TYPE mood AS ENUM ('sad', 'happy')",
        "CREATE TABLE v (id int PRIMARY KEY, b bool, i2 int2, i8 int8, f4 real, f8 float8, n numeric, "
        "txt varchar(10), by bytea, d date, t time, ts timestamp, ts3 timestamp(3), tz timestamptz, "
        "iv interval, j jsonb, u uuid, m mood, arr int[], bits bit(4))",
    )
    row = (
        "true, -2, 9000000000, 1.5, 0.1, 12.345, 'hé', '\\x00ff', '2000-02-29', '13:14:15.5', "
        "'2018-06-20 15:13:16.945104', '2018-06-20 15:13:16.945', '2024-01-02 03:04:05+02', "
        "'1 day 2 hours', '{\"k\": [1]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy', '{1,NULL}', "
        "B'1010'"
    )
    cdc_db.run(f"INSERT INTO v VALUES (1, {row})")
    _, prefix = cdc.start(cdc_db)
    topic = cdc.reader(f"{prefix}.public.v")
    topic.count(1)
    cdc_db.run(f"INSERT INTO v VALUES (2, {row})")
    snapshotted, streamed = topic.count(2)
    expected = {
        "b": True,
        "i2": -2,
        "i8": 9000000000,
        "f4": 1.5,
        "f8": 0.1,
        "n": {"scale": 3, "value": "MDk="},
        "txt": "hé",
        "by": "AP8=",
        "d": 11016,
        "t": 47655500000,
        "ts": 1529507596945104,
        "ts3": 1529507596945,
        "tz": "2024-01-02T01:04:05Z",
        "iv": 93600000000,
        "j": '{"k": [1]}',
        "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "m": "happy",
        "arr": [1, None],
        "bits": "Cg==",
    }
    assert {k: v for k, v in snapshotted.value["after"].items() if k != "id"} == expected
    assert {k: v for k, v in streamed.value["after"].items() if k != "id"} == expected
    assert snapshotted.value_schema == streamed.value_schema


def test_the_snapshot_and_concurrent_writes_leave_no_gap_and_no_overlap(
    cdc: Cdc, cdc_db: CdcDatabase
) -> None:
    """Rows change while the snapshot is read: replaying the events gives exactly the final table,
    every row shows up once as snapshot read or insert, and no change is seen twice (each row's
    version only grows along its events)."""
    cdc_db.run(
        "CREATE TABLE t (id serial PRIMARY KEY, version int NOT NULL)",
        "INSERT INTO t (version) SELECT 0 FROM generate_series(1, 3000)",
    )
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        rng = random.Random(7)
        try:
            with psycopg.connect(cdc_db.dsn, autocommit=True, options="-c synchronous_commit=on") as conn:
                while not stop.is_set():
                    with conn.transaction():
                        conn.execute("INSERT INTO t (version) VALUES (0)")
                        target = rng.randint(1, 3000)
                        conn.execute("UPDATE t SET version = version + 1 WHERE id = %s", (target,))
                        if rng.random() < 0.2:
                            conn.execute("DELETE FROM t WHERE id = %s", (rng.randint(1, 3000),))
        except BaseException as exc:
            failures.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        _, prefix = cdc.start(cdc_db, max_batch_size="100", snapshot_fetch_size="100")
        topic = cdc.reader(f"{prefix}.public.t")
        topic.until(lambda e: e.value is not None and e.source["snapshot"] == "last", timeout=60)
        time.sleep(0.3)  # keep writing once streaming has begun too
    finally:
        stop.set()
        writer.join(10)
    assert not failures, failures
    cdc_db.run("INSERT INTO t (version) VALUES (-1)")  # the fence
    events = topic.until(lambda e: e.value is not None and (e.row or {}).get("version") == -1, timeout=60)
    state: dict[int, int] = {}
    seen_versions: dict[int, int] = {}
    creations: dict[int, int] = {}
    snapshot_ended = False
    for e in events:
        if e.value is None:
            continue
        op, row = e.op, e.row
        assert row is not None
        key = e.key["id"]
        if op in ("r", "c"):
            creations[key] = creations.get(key, 0) + 1
        if op == "r":
            assert not snapshot_ended, "a snapshot read after the snapshot's last record"
            snapshot_ended = e.source["snapshot"] == "last"
        if op == "d":
            state.pop(key, None)
            continue
        assert seen_versions.get(key, -2) < row["version"], (
            f"row {key} seen again at version {row['version']}"
        )
        seen_versions[key] = row["version"]
        state[key] = row["version"]
    assert all(n == 1 for n in creations.values()), {k: n for k, n in creations.items() if n != 1}
    assert state == dict(cdc_db.rows("SELECT id, version FROM t"))


def test_heartbeats_let_the_slot_advance_while_captured_tables_are_idle(
    cdc: Cdc, cdc_db: CdcDatabase
) -> None:
    cdc_db.run("CREATE TABLE watched (id int PRIMARY KEY)", "CREATE TABLE busy (id serial PRIMARY KEY)")
    _, prefix = cdc.start(cdc_db, table_include_list="public.watched", heartbeat_interval_ms="100")
    heartbeats = cdc.reader(f"__debezium-heartbeat.{prefix}")
    first = heartbeats.count(1)[0]
    assert first.key == {"serverName": prefix}
    assert first.key_schema["name"] == "io.debezium.connector.common.ServerNameKey"
    assert first.value_schema["name"] == "io.debezium.connector.common.Heartbeat"
    assert first.value["ts_ms"] > 0
    slot = cdc_db_slot(cdc_db)
    for _ in range(20):
        cdc_db.run("INSERT INTO busy DEFAULT VALUES")
    target = lsn(cdc_db.value("SELECT pg_current_wal_lsn()::text"))
    cdc.connect.wait_for(
        lambda: lsn((cdc_db.slot(slot) or {})["confirmed_flush_lsn"]) >= target,
        20,
        "the slot to pass the writes",
    )
    assert len(heartbeats.count(3)) == 3


def test_stop_and_resume_loses_nothing_and_repeats_nothing(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    name, prefix = cdc.start(cdc_db)
    topic = cdc.reader(f"{prefix}.public.t")
    topic.count(1)
    cdc_db.run("INSERT INTO t VALUES (2)")
    topic.count(2)
    assert cdc.connect.request("PUT", f"/connectors/{name}/stop").status_code in (202, 204)
    cdc.connect.wait_for_state(name, "STOPPED", tasks=0)
    cdc_db.run("INSERT INTO t VALUES (3)", "UPDATE t SET id = 30 WHERE id = 3", "INSERT INTO t VALUES (4)")
    assert cdc.connect.request("PUT", f"/connectors/{name}/resume").status_code == 202
    cdc_db.run("INSERT INTO t VALUES (99)")  # the fence
    events = topic.until(lambda e: e.key == {"id": 99})
    assert ops(events) == [
        ("r", {"id": 1}, None, {"id": 1}, "last"),
        ("c", {"id": 2}, None, {"id": 2}, "false"),
        ("c", {"id": 3}, None, {"id": 3}, "false"),
        ("d", {"id": 3}, {"id": 3}, None, "false"),
        ("tombstone", {"id": 3}),
        ("c", {"id": 30}, None, {"id": 30}, "false"),
        ("c", {"id": 4}, None, {"id": 4}, "false"),
        ("c", {"id": 99}, None, {"id": 99}, "false"),
    ]


@pytest.mark.parametrize("mode", ["no_data", "never"])
def test_snapshot_mode_no_data_streams_only(cdc: Cdc, cdc_db: CdcDatabase, mode: str) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    _, prefix = cdc.start(cdc_db, snapshot_mode=mode)
    wait_slot(cdc, cdc_db)
    cdc_db.run("INSERT INTO t VALUES (2)")
    assert ops(cdc.reader(f"{prefix}.public.t").count(1)) == [("c", {"id": 2}, None, {"id": 2}, "false")]


def test_snapshot_mode_initial_only_reads_and_stops(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")
    _, prefix = cdc.start(cdc_db, snapshot_mode="initial_only")
    topic = cdc.reader(f"{prefix}.public.t")
    assert [e.op for e in topic.count(2)] == ["r", "r"]
    cdc_db.run("INSERT INTO t VALUES (3)")
    assert len(topic.settle()) == 2
    assert cdc_db.rows(f"SELECT 1 FROM pg_replication_slots WHERE database = '{cdc_db.name}'") == []


def test_filtered_publication_and_slot_dropped_on_stop(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run("CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)")
    name, prefix = cdc.start(
        cdc_db,
        publication_autocreate_mode="filtered",
        publication_name="only_a",
        table_include_list="public.a",
        slot_drop_on_stop="true",
    )
    wait_slot(cdc, cdc_db)
    published = cdc_db.rows(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = 'only_a'"
    )
    assert published == [("public", "a")]
    cdc_db.run("INSERT INTO b VALUES (1)", "INSERT INTO a VALUES (1)")
    assert ops(cdc.reader(f"{prefix}.public.a").count(1)) == [("c", {"id": 1}, None, {"id": 1}, "false")]
    assert cdc.connect.request("DELETE", f"/connectors/{name}").status_code == 204
    query = f"SELECT 1 FROM pg_replication_slots WHERE database = '{cdc_db.name}'"
    cdc.connect.wait_for(lambda: cdc_db.rows(query) == [], 20, "the slot to be dropped")


# -- faults ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"database_user": "nobody"}, "cannot log in to PostgreSQL"),
        ({"database_dbname": "no_such_db"}, "database 'no_such_db' does not exist"),
        ({"publication_autocreate_mode": "disabled"}, "publication.autocreate.mode=disabled: create it"),
    ],
)
def test_configuration_faults_fail_the_task_saying_what_to_fix(
    cdc: Cdc, cdc_db: CdcDatabase, settings: dict[str, str], message: str
) -> None:
    name, _ = cdc.start(cdc_db, **settings)
    assert message in cdc.wait_failed(name)


def test_an_unsupported_column_type_fails_naming_it_unless_included_as_text(
    cdc: Cdc, cdc_db: CdcDatabase
) -> None:
    cdc_db.run("CREATE TABLE shapes (id int PRIMARY KEY, at point)", "INSERT INTO shapes VALUES (1, '(1,2)')")
    name, _ = cdc.start(cdc_db)
    trace = cdc.wait_failed(name)
    assert "column at of table public.shapes has type point" in trace
    assert "column.exclude.list" in trace and "include.unknown.datatypes=true" in trace
    _, prefix = cdc.start(cdc_db, include_unknown_datatypes="true")
    assert cdc.reader(f"{prefix}.public.shapes").count(1)[0].value["after"] == {"id": 1, "at": "(1,2)"}


def test_a_slot_dropped_behind_the_connectors_back_fails_it(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    name, prefix = cdc.start(cdc_db)
    topic = cdc.reader(f"{prefix}.public.t")
    topic.count(1)
    cdc_db.run("INSERT INTO t VALUES (2)")
    topic.count(2)
    slot = cdc_db_slot(cdc_db)
    assert cdc.connect.request("PUT", f"/connectors/{name}/stop").status_code in (202, 204)
    cdc.connect.wait_for_state(name, "STOPPED", tasks=0)
    cdc_db.wait_slot_inactive(slot)
    cdc_db.run(f"SELECT pg_drop_replication_slot('{slot}')")
    assert cdc.connect.request("PUT", f"/connectors/{name}/resume").status_code == 202
    trace = cdc.wait_failed(name)
    assert f'replication slot "{slot}" does not exist' in trace
    assert "delete its offsets" in trace


def test_wal_level_replica_fails_saying_to_set_logical(cdc: Cdc) -> None:
    server = PostgresServer(settings={"wal_level": "replica"})
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    db = CdcDatabase(server)
    try:
        name, _ = cdc.start(db)
        trace = cdc.wait_failed(name)
        assert "runs with wal_level=replica" in trace and "set wal_level = logical" in trace
    finally:
        cdc.close()
        cdc.names.clear()
        server.remove()


def test_a_database_restart_is_survived_and_streaming_resumes(cdc: Cdc) -> None:
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    db = CdcDatabase(server)
    try:
        db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
        name, prefix = cdc.start(db)
        topic = cdc.reader(f"{prefix}.public.t")
        topic.count(1)
        db.run("INSERT INTO t VALUES (2)")
        topic.count(2)
        server.restart("immediate")  # a crash: recovery on start, connections cut
        db.run("INSERT INTO t VALUES (3)")
        server.restart("fast")
        db.run("INSERT INTO t VALUES (4)", "INSERT INTO t VALUES (99)")
        events = topic.until(lambda e: e.key == {"id": 99}, timeout=60)
        assert [e.key["id"] for e in events] == [1, 2, 3, 4, 99]
        assert cdc.connect.status(name)["tasks"][0]["state"] == "RUNNING"
    finally:
        cdc.close()
        cdc.names.clear()
        server.remove()


def test_config_validation_over_rest(connect: EmbeddedConnect) -> None:
    config = {
        "name": "validated",
        "connector.class": CLASS,
        "database.hostname": "localhost",
        "database.user": "u",
        "database.password": "s3cret",
        "database.dbname": "d",
        "topic.prefix": "p",
        "plugin.name": "decoderbufs",
        "table.include.list": "a\\.b",
        "table.exclude.list": "c",
        "skipped.operations": "t,x",
        "snapshot.mode": "INITIAL",
    }
    r = connect.request("PUT", "/connector-plugins/PostgresConnector/config/validate", config)
    assert r.status_code == 200, r.text
    body = r.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert set(errors) == {"plugin.name", "table.exclude.list", "skipped.operations"}
    assert body["error_count"] == 3
    assert "s3cret" not in r.text


# -- snapshot progress -----------------------------------------------------------------------------------


def test_snapshot_progress_is_exported_and_shown_by_ctl(cdc: Cdc, cdc_db: CdcDatabase) -> None:
    """The task's plugin metrics at /metrics, and ``sluiceway ctl snapshot`` reading them."""
    import subprocess
    import sys

    import orjson

    cdc_db.run(
        "CREATE TABLE counted (id int PRIMARY KEY)",
        "INSERT INTO counted SELECT generate_series(1, 300)",
        "CREATE TABLE analysed (id int PRIMARY KEY)",
        "INSERT INTO analysed SELECT generate_series(1, 200)",
        "ANALYZE analysed",  # estimated from pg_class.reltuples; `counted` is counted
    )
    name, prefix = cdc.start(cdc_db)
    assert len(cdc.reader(f"{prefix}.public.counted").count(300)) == 300

    def ctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sluiceway.cli", "ctl", "--url", cdc.connect.url, *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    def completed() -> bool:
        answer = ctl("snapshot", name, "-o", "json")
        return answer.returncode == 0 and orjson.loads(answer.stdout)[0]["completed"]

    cdc.connect.wait_for(completed, 30, "the snapshot to be reported complete")
    [progress] = orjson.loads(ctl("snapshot", name, "-o", "json").stdout)
    assert progress == {
        "task": 0,
        "running": False,
        "completed": True,
        "rows_scanned": 500,
        "rows_estimated": 500,
    }
    waited = ctl("snapshot", name, "--wait")
    assert waited.returncode == 0
    assert f"{name}: snapshot complete, 500 rows" in waited.stdout
    metrics = cdc.connect.request("GET", "/metrics").text
    assert f'kafka_connect_plugins_snapshot_rows_scanned{{connector="{name}",task="0"}} 500.0' in metrics
    # A connector without snapshot metrics is told so, with exit code 1.
    other = unique("nosnap")
    cdc.connect.create_connector(
        other, {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": other}
    )
    cdc.names.append(other)
    cdc.connect.wait_for_running(other)
    refused = ctl("snapshot", other)
    assert refused.returncode == 1
    assert "reports no snapshot progress" in refused.stderr
