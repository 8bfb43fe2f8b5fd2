"""The schema history topic on the real embedded broker, its record format, the position
comparison recovery relies on, and schema change events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from hypothesis import given
from hypothesis import strategies as st

from broker.server import EmbeddedBroker
from connect.api import ConnectException, Struct
from connectors.jdbc.mysql.events import SOURCE_SCHEMA
from connectors.jdbc.mysql.history import SchemaHistory, position_at_or_before
from connectors.jdbc.mysql.schema import DdlError, SchemaCatalog, TableChange
from connectors.jdbc.mysql.schema_changes import KEY_SCHEMA, debezium_default, schema_change_record
from tests.support import unique

SERVER = "dbserver1"


def history(broker: EmbeddedBroker, topic: str, **options: Any) -> SchemaHistory:
    return SchemaHistory(topic, {"bootstrap.servers": broker.bootstrap}, SERVER, **options)


def read_values(broker: EmbeddedBroker, topic: str) -> list[tuple[bytes | None, dict[str, Any]]]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("check")})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        out: list[tuple[bytes | None, dict[str, Any]]] = []
        while len(out) < high - low:
            message = consumer.poll(5)
            assert message is not None and message.error() is None
            out.append((message.key(), json.loads(message.value() or b"")))
        return out
    finally:
        consumer.close()


def position(pos: int, file: str = "mysql-bin.000003", **extra: Any) -> dict[str, Any]:
    return {"file": file, "pos": pos, **extra}


def store(
    h: SchemaHistory, catalog: SchemaCatalog, at: dict[str, Any], ddl: str, database: str = "inv"
) -> None:
    h.record({"server": SERVER}, at, database, ddl, catalog.apply(ddl, database), 1_700_000_000_000)


def test_topic_is_created_as_debezium_creates_it(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    assert not h.exists()
    h.ensure_topic()
    h.ensure_topic()  # idempotent
    config = h.topic_config()
    assert (config["cleanup.policy"], config["retention.ms"], config["retention.bytes"]) == (
        "delete",
        "-1",
        "-1",
    )
    assert not h.exists()  # exists means: holds a record
    store(h, SchemaCatalog(), position(4), "CREATE DATABASE inv")
    assert h.exists()
    h.close()


def test_a_topic_with_several_partitions_is_refused(shared_broker: EmbeddedBroker) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    topic = unique("history")
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=2)])[topic].result(10)
    with pytest.raises(ConnectException, match="2 partitions"):
        history(shared_broker, topic).ensure_topic()


def test_records_are_debezium_history_records(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    h.ensure_topic()
    catalog = SchemaCatalog()
    at = position(154, gtids="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", server_id=223344, ts_sec=1700000000)
    ddl = (
        "CREATE TABLE customers (id int(11) NOT NULL AUTO_INCREMENT, first_name varchar(255) NOT NULL,"
        " state enum('a','b') DEFAULT 'a', n decimal(10,2) unsigned DEFAULT 0.00, created timestamp NOT NULL"
        " DEFAULT current_timestamp(), PRIMARY KEY (id)) DEFAULT CHARSET=utf8mb4 COMMENT 'people'"
    )
    store(h, catalog, at, ddl)
    store(h, catalog, position(300), "DROP TABLE customers")
    h.close()
    (key, create), (_, drop) = read_values(shared_broker, topic)
    assert key is None
    assert list(create) == ["source", "position", "ts_ms", "databaseName", "ddl", "tableChanges"]
    assert create["source"] == {"server": SERVER}
    assert create["position"] == at
    assert (create["ts_ms"], create["databaseName"], create["ddl"]) == (1_700_000_000_000, "inv", ddl)
    (change,) = create["tableChanges"]
    assert (change["type"], change["id"], change["comment"]) == ("CREATE", '"inv"."customers"', "people")
    table = change["table"]
    assert (table["defaultCharsetName"], table["primaryKeyColumnNames"], table["attributes"]) == (
        "utf8mb4",
        ["id"],
        [],
    )
    id_, name, state, n, created = table["columns"]
    assert id_ == {
        "name": "id",
        "jdbcType": 4,
        "typeName": "INT",
        "typeExpression": "INT",
        "charsetName": None,
        "length": 11,
        "position": 1,
        "optional": False,
        "autoIncremented": True,
        "generated": True,
        "comment": None,
        "hasDefaultValue": False,
        "enumValues": [],
    }
    assert (name["typeName"], name["charsetName"], name["length"], name["jdbcType"]) == (
        "VARCHAR",
        "utf8mb4",
        255,
        12,
    )
    assert (state["enumValues"], state["defaultValueExpression"], state["hasDefaultValue"]) == (
        ["a", "b"],
        "a",
        True,
    )
    assert (n["typeName"], n["length"], n["scale"], n["defaultValueExpression"]) == (
        "DECIMAL UNSIGNED",
        10,
        2,
        "0.00",
    )
    assert created["defaultValueExpression"] == "1970-01-01 00:00:00"
    assert drop["tableChanges"] == [
        {"type": "DROP", "id": '"inv"."customers"', "table": None, "comment": None}
    ]


def test_recovery_replays_the_statements_up_to_the_offset(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    h.ensure_topic()
    live = SchemaCatalog()
    statements = [
        (position(100), "CREATE DATABASE inv"),
        (position(200), "CREATE TABLE t (a int, b text)"),
        (position(300), "ALTER TABLE t ADD COLUMN c int FIRST"),
        (position(400, event=1), "RENAME TABLE t TO u"),
        (position(100, file="mysql-bin.000004"), "ALTER TABLE u DROP COLUMN b"),
    ]
    snapshots = []
    for at, ddl in statements:
        store(h, live, at, ddl)
        snapshots.append(live.copy())
    # Another connector's records in the same topic are not ours.
    h.record({"server": "other"}, position(150), "inv", "CREATE TABLE inv.x (z int)", [], 0)
    h.close()
    for (at, _ddl), expected in zip(statements, snapshots, strict=True):
        recovered = SchemaCatalog()
        history(shared_broker, topic).recover(at, recovered)
        assert recovered.tables() == expected.tables(), at
    between = SchemaCatalog()
    history(shared_broker, topic).recover(position(399, event=5), between)
    assert between.tables() == snapshots[2].tables()
    everything = SchemaCatalog()
    history(shared_broker, topic).recover(None, everything)
    assert everything.tables() == live.tables()
    assert [c.name for c in everything.table("inv", "u").columns] == ["c", "a"]  # type: ignore[union-attr]


def test_recovery_of_an_empty_history_leaves_the_catalog_empty(
    shared_broker: EmbeddedBroker,
) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    h.ensure_topic()
    catalog = SchemaCatalog()
    h.recover(position(1), catalog)
    assert catalog.tables() == []


def test_unparseable_ddl_fails_recovery_unless_skipped(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    h.ensure_topic()
    store(h, SchemaCatalog(), position(10), "CREATE TABLE t (a int)")
    h.record({"server": SERVER}, position(20), "inv", "ALTER TABLE t DROP nonexistent", [], 0)
    store(h, SchemaCatalog(), position(30), "CREATE TABLE u (b int)")
    h.close()
    with pytest.raises(DdlError, match=rf"{topic}@1.*ALTER TABLE t DROP nonexistent"):
        history(shared_broker, topic).recover(None, SchemaCatalog())
    catalog = SchemaCatalog()
    history(shared_broker, topic, skip_unparseable_ddl=True).recover(None, catalog)
    assert [t.id for t in catalog.tables()] == ["inv.t", "inv.u"]


def test_a_record_that_is_not_json_fails_recovery(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    history(shared_broker, topic).ensure_topic()
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap})
    producer.produce(topic, b"{not json", partition=0)
    producer.flush(10)
    with pytest.raises(ConnectException, match="not JSON"):
        history(shared_broker, topic).recover(None, SchemaCatalog())


def test_a_position_that_cannot_be_compared_fails_recovery(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(shared_broker, topic)
    h.ensure_topic()
    store(h, SchemaCatalog(), position(10, gtids="not a gtid set"), "CREATE TABLE t (a int)")
    h.close()
    with pytest.raises(ConnectException, match=rf"{topic}@0: cannot compare its position"):
        history(shared_broker, topic).recover(position(20, gtids=f"{UUID_A}:1-3"), SchemaCatalog())


def test_only_captured_tables_are_recorded_when_asked(shared_broker: EmbeddedBroker) -> None:
    topic = unique("history")
    h = history(
        shared_broker,
        topic,
        store_only_captured_tables_ddl=True,
        captured=lambda db, table: table.startswith("keep"),
    )
    h.ensure_topic()
    catalog = SchemaCatalog()
    store(h, catalog, position(1), "CREATE TABLE keep_me (a int)")
    store(h, catalog, position(2), "CREATE TABLE skip_me (a int)")
    store(h, catalog, position(3), "RENAME TABLE keep_me TO elsewhere")  # leaves a captured table
    store(h, catalog, position(4), "CREATE DATABASE other")  # no table: kept
    h.close()
    assert [v["ddl"] for _, v in read_values(shared_broker, topic)] == [
        "CREATE TABLE keep_me (a int)",
        "RENAME TABLE keep_me TO elsewhere",
        "CREATE DATABASE other",
    ]


def test_recovery_reads_past_transaction_markers(shared_broker: EmbeddedBroker) -> None:
    # Records written in a transaction are followed by a commit marker, which takes an offset
    # but is never delivered: recovery must still see that it reached the end.
    topic = unique("history")
    history(shared_broker, topic).ensure_topic()
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "transactional.id": unique("tx")})
    producer.init_transactions(10)
    producer.begin_transaction()
    for ddl in ("CREATE TABLE t (a int)", "ALTER TABLE t ADD b int"):
        value = {"source": {"server": SERVER}, "position": position(4), "databaseName": "inv", "ddl": ddl}
        producer.produce(topic, json.dumps(value), partition=0)
    producer.commit_transaction(10)
    catalog = SchemaCatalog()
    history(shared_broker, topic, recovery_attempts=2, recovery_poll_interval_ms=10).recover(None, catalog)
    assert [c.name for c in catalog.table("inv", "t").columns] == ["a", "b"]  # type: ignore[union-attr]


def test_an_unreachable_broker_fails_recovery(shared_broker: EmbeddedBroker) -> None:
    from tests.support import free_port

    config = {"bootstrap.servers": f"127.0.0.1:{free_port()}"}
    unreachable = SchemaHistory("h", config, SERVER, request_timeout_s=1)
    with pytest.raises(ConnectException, match="cannot read the schema history topic h"):
        unreachable.recover(None, SchemaCatalog())


# -- positions ------------------------------------------------------------------------------------

_coordinates = st.tuples(st.integers(1, 3), st.integers(4, 500), st.integers(0, 3), st.integers(0, 3))


def _at(c: tuple[int, int, int, int]) -> dict[str, Any]:
    return {"file": f"mysql-bin.{c[0]:06d}", "pos": c[1], "event": c[2], "row": c[3]}


@given(a=_coordinates, b=_coordinates)
def test_binlog_positions_compare_by_file_position_event_and_row(
    a: tuple[int, int, int, int], b: tuple[int, int, int, int]
) -> None:
    assert position_at_or_before(_at(a), _at(b)) == (a <= b)


def test_binlog_file_numbers_compare_as_numbers() -> None:
    assert position_at_or_before({"file": "bin.999999", "pos": 9}, {"file": "bin.1000000", "pos": 4})


UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "5ee3a8f4-71ca-11e1-9e33-c80aa9429562"


@pytest.mark.parametrize(
    ("recorded", "desired", "expected"),
    [
        ({"gtids": f"{UUID_A}:1-5", "pos": 9}, {"gtids": f"{UUID_A}:1-7", "pos": 1}, True),
        ({"gtids": f"{UUID_A}:1-8"}, {"gtids": f"{UUID_A}:1-7"}, False),
        ({"gtids": f"{UUID_A}:1-5,{UUID_B}:1-2"}, {"gtids": f"{UUID_A}:1-7"}, False),
        ({"gtids": f"{UUID_A}:1-3:5"}, {"gtids": f"{UUID_A}:1-5,\n{UUID_B}:1"}, True),
        ({"gtids": f"{UUID_A}:1-5", "pos": 9}, {"gtids": f"{UUID_A}:1-5", "pos": 10}, True),
        ({"gtids": f"{UUID_A}:1-5", "pos": 11}, {"gtids": f"{UUID_A}:1-5", "pos": 10}, False),
        ({"pos": 99999}, {"gtids": f"{UUID_A}:1"}, True),
        ({"gtids": f"{UUID_A}:1"}, {"pos": 99999}, False),
        ({"gtids": "0-1-100,1-2-5"}, {"gtids": "0-1-120,1-3-5"}, True),
        ({"gtids": "0-1-130"}, {"gtids": "0-1-120,1-3-5"}, False),
        ({"server_id": 1, "ts_sec": 5, "pos": 900}, {"server_id": 2, "ts_sec": 6, "pos": 4}, True),
    ],
)
def test_gtid_and_server_comparisons(
    recorded: dict[str, Any], desired: dict[str, Any], expected: bool
) -> None:
    assert (
        position_at_or_before({"file": "b.000001", **recorded}, {"file": "b.000001", **desired}) is expected
    )


# -- schema change events ---------------------------------------------------------------------------


def test_schema_change_records_carry_debeziums_key_and_value() -> None:
    catalog = SchemaCatalog()
    ddl = "CREATE TABLE t (id bigint unsigned NOT NULL, s set('x','y') DEFAULT 'x', PRIMARY KEY (id))"
    changes = catalog.apply(ddl, "inv")
    source = Struct(SOURCE_SCHEMA)
    for name, value in {
        "version": "3.0",
        "connector": "mysql",
        "name": SERVER,
        "ts_ms": 1,
        "db": "inv",
    }.items():
        source.put(name, value)
    source.put("server_id", 1).put("file", "mysql-bin.000001").put("pos", 4).put("row", 0).put("table", "t")
    offset = {"file": "mysql-bin.000001", "pos": 4}
    record = schema_change_record(SERVER, source, "inv", ddl, changes, 42, {"server": SERVER}, offset)
    assert (record.topic, record.kafka_partition, record.source_partition, record.source_offset) == (
        SERVER,
        0,
        {"server": SERVER},
        offset,
    )
    assert record.key_schema is KEY_SCHEMA and record.key.get("databaseName") == "inv"
    assert record.value_schema is not None
    assert record.value_schema.name == "io.debezium.connector.mysql.SchemaChangeValue"
    value = record.value
    value.validate()
    assert (value.get("ts_ms"), value.get("databaseName"), value.get("schemaName"), value.get("ddl")) == (
        42,
        "inv",
        None,
        ddl,
    )
    (change,) = value.get("tableChanges")
    assert (change.get("type"), change.get("id")) == ("CREATE", '"inv"."t"')
    table = change.get("table")
    assert table.get("primaryKeyColumnNames") == ["id"]
    id_, s = table.get("columns")
    assert (id_.get("typeName"), id_.get("optional"), id_.get("enumValues")) == (
        "BIGINT UNSIGNED",
        False,
        None,
    )
    assert (s.get("typeName"), s.get("enumValues"), s.get("defaultValueExpression")) == (
        "SET",
        ["x", "y"],
        "x",
    )
    drop = schema_change_record(
        SERVER, source, "inv", "DROP TABLE t", [TableChange("DROP", "inv.t", None)], 43, {}, offset
    )
    drop.value.validate()
    assert drop.value.get("tableChanges")[0].get("table") is None


@pytest.mark.parametrize(
    ("default", "expected"),
    [
        (None, None),
        ("NULL", None),
        ("'it''s'", "it's"),
        ("_utf8mb4'x\\\\y'", "x\\y"),
        ('"q"', "q"),
        ("-1.5", "-1.5"),
        ("current_timestamp(3)", "1970-01-01 00:00:00"),
        ("NOW()", "1970-01-01 00:00:00"),
        ("(1 + 2)", "(1 + 2)"),
        ("b'101'", "b'101'"),
    ],
)
def test_default_value_expressions_follow_debezium(default: str | None, expected: str | None) -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a varchar(10))", "db")
    column = catalog.table("db", "t").columns[0]  # type: ignore[union-attr]
    assert debezium_default(column.__class__(**{**column.__dict__, "default": default})) == expected


def _gtid_text(transactions: set[tuple[str, int]]) -> str:
    """A MySQL GTID set string for these (server uuid, transaction number) pairs."""
    parts = []
    for uuid in sorted({u for u, _ in transactions}):
        numbers = sorted(n for u, n in transactions if u == uuid)
        intervals: list[list[int]] = []
        for n in numbers:
            if intervals and intervals[-1][1] == n - 1:
                intervals[-1][1] = n
            else:
                intervals.append([n, n])
        parts.append(uuid + "".join(f":{a}" if a == b else f":{a}-{b}" for a, b in intervals))
    return ",".join(parts)


_transactions = st.sets(st.tuples(st.sampled_from([UUID_A, UUID_B]), st.integers(1, 12)), min_size=1)


@given(recorded=_transactions, desired=_transactions)
def test_differing_mysql_gtid_sets_compare_by_inclusion(
    recorded: set[tuple[str, int]], desired: set[tuple[str, int]]
) -> None:
    at = {"file": "b.000009", "pos": 999}
    before = {"file": "b.000001", "pos": 4}
    actual = position_at_or_before(
        {**at, "gtids": _gtid_text(recorded)}, {**before, "gtids": _gtid_text(desired)}
    )
    # Equal sets fall through to the binlog coordinates (here: after), differing ones compare by inclusion.
    assert actual == (recorded < desired)
