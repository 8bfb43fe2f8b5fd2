"""The pure parts of the MySQL CDC runtime: stored offsets, the start-up plan, GTID sets,
GTID source filters and the configuration's checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api import ConfigValidationError
from connectors.jdbc.mysql.config import MySqlCdcConfig, SnapshotMode
from connectors.jdbc.mysql.offsets import (
    BinlogPosition,
    SnapshotKind,
    StoredOffset,
    plan_start,
    snapshot_offset,
    stream_offset,
)
from connectors.jdbc.mysql.stream import GtidSet

BASE = {
    "database.hostname": "db",
    "database.user": "u",
    "database.server.id": "5400",
    "topic.prefix": "srv",
    "schema.history.internal.kafka.topic": "h",
    "schema.history.internal.kafka.bootstrap.servers": "k:9092",
}


def test_stored_offsets_round_trip() -> None:
    streamed = StoredOffset.parse(stream_offset("mysql-bin.000003", 154, "0-1-7", 2, 5, 1700000000, 1))
    assert streamed == StoredOffset(True, BinlogPosition("mysql-bin.000003", 154, 2, 5, "0-1-7"))
    in_snapshot = StoredOffset.parse(snapshot_offset("mysql-bin.000001", 4, None, 1, 1, completed=False))
    assert in_snapshot is not None and not in_snapshot.snapshot_completed
    done = StoredOffset.parse(snapshot_offset("mysql-bin.000001", 4, None, 1, 1, completed=True))
    assert done == StoredOffset(True, BinlogPosition("mysql-bin.000001", 4))
    assert StoredOffset.parse(None) is None and StoredOffset.parse({}) is None
    # Debezium's own offsets (no event/row) resume at the transaction's start.
    assert StoredOffset.parse({"file": "f", "pos": 9, "ts_sec": 1}) == StoredOffset(
        True, BinlogPosition("f", 9)
    )
    with pytest.raises(ValueError, match="binlog file"):
        StoredOffset.parse({"lsn": 5})
    with pytest.raises(ValueError, match="pos"):
        StoredOffset.parse({"file": "f", "pos": "9"})


DONE = StoredOffset(True, BinlogPosition("mysql-bin.000002", 120, 1, 3))
HALF = StoredOffset(False, BinlogPosition("mysql-bin.000002", 120))


def plan(mode: SnapshotMode, stored: StoredOffset | None, binlog: bool = True, history: bool = True):  # type: ignore[no-untyped-def]
    return plan_start(mode, stored, binlog, history, "h")


def test_the_start_up_plan_follows_debezium() -> None:
    assert plan(SnapshotMode.INITIAL, None).snapshot is SnapshotKind.DATA
    assert plan(SnapshotMode.INITIAL, HALF).snapshot is SnapshotKind.DATA  # a snapshot cut short: again
    resumed = plan(SnapshotMode.INITIAL, DONE)
    assert (
        resumed.snapshot is SnapshotKind.NONE and resumed.resume == DONE.position and resumed.recover_history
    )
    assert plan(SnapshotMode.NO_DATA, None).snapshot is SnapshotKind.SCHEMA
    assert plan(SnapshotMode.NEVER, None).from_oldest
    only = plan(SnapshotMode.INITIAL_ONLY, None)
    assert only.snapshot is SnapshotKind.DATA and not only.stream
    assert not plan(SnapshotMode.INITIAL_ONLY, DONE).stream
    # The binlog position is gone: fail saying what to do, or snapshot again when_needed.
    purged = plan(SnapshotMode.INITIAL, DONE, binlog=False)
    assert purged.failure is not None and "snapshot.mode=when_needed" in purged.failure
    assert "mysql-bin.000002:120" in purged.failure
    assert plan(SnapshotMode.WHEN_NEEDED, DONE, binlog=False).snapshot is SnapshotKind.DATA
    # The schema history is gone: recovery rebuilds it from today's schemas.
    lost = plan(SnapshotMode.INITIAL, DONE, history=False)
    assert lost.failure is not None and "snapshot.mode=recovery" in lost.failure
    recovery = plan(SnapshotMode.RECOVERY, DONE, history=False)
    assert recovery.snapshot is SnapshotKind.SCHEMA and recovery.resume == DONE.position


@given(st.sampled_from(list(SnapshotMode)), st.sampled_from([None, HALF, DONE]), st.booleans(), st.booleans())
def test_every_plan_either_fails_or_knows_where_to_start(
    mode: SnapshotMode, stored: StoredOffset | None, binlog: bool, history: bool
) -> None:
    if mode in (SnapshotMode.SCHEMA_ONLY, SnapshotMode.SCHEMA_ONLY_RECOVERY):
        return  # aliases: the config maps them first
    p = plan(mode, stored, binlog, history)
    if p.failure is not None:
        assert stored is DONE  # only a connector that already streamed can have lost something
        return
    if not p.stream:
        return
    assert p.snapshot is not SnapshotKind.NONE or p.resume is not None or p.from_oldest
    if p.resume is not None:
        assert binlog  # never resume at a purged position


def test_gtid_sets() -> None:
    gtids = GtidSet("0-1-5,1-2-9")
    gtids.add("0-1-6")
    assert gtids.text() == "0-1-6,1-2-9"
    mysql = GtidSet("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    mysql.add("3e11fa47-71ca-11e1-9e33-c80aa9429562:6")
    assert mysql.text() == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-6"
    assert GtidSet(None).text() is None


def test_config_keys_aliases_and_checks() -> None:
    config = MySqlCdcConfig.parse(
        {**BASE, "snapshot.mode": "SCHEMA_ONLY", "schema.history.internal.consumer.x": "1"}
    )
    assert config.effective_snapshot_mode is SnapshotMode.NO_DATA
    assert config.history_client_config() == {"bootstrap.servers": "k:9092", "x": "1"}
    assert MySqlCdcConfig.parse(
        {**BASE, "snapshot.mode": "schema_only_recovery"}
    ).effective_snapshot_mode is (SnapshotMode.RECOVERY)
    assert config.port == 3306 and config.tombstones_on_delete and config.include_schema_changes
    assert config.heartbeat_topic == "__debezium-heartbeat.srv"
    problems = {
        i.key
        for i in MySqlCdcConfig.problems(
            {
                **BASE,
                "snapshot.mode": "sometimes",
                "table.include.list": "a",
                "table.exclude.list": "b",
                "gtid.source.includes": "(",
            }
        )
    }
    assert problems == {"snapshot.mode", "table.exclude.list", "gtid.source.includes"}
    with pytest.raises(ConfigValidationError):
        MySqlCdcConfig.parse({k: v for k, v in BASE.items() if k != "database.server.id"})
    gtid = MySqlCdcConfig.parse({**BASE, "gtid.source.includes": "0-1"}).gtid_filter()
    assert gtid.accepts("0-1-17") and not gtid.accepts("0-2-3") and gtid.accepts(None)
    mysql = MySqlCdcConfig.parse({**BASE, "gtid.source.excludes": "aaa.*"}).gtid_filter()
    assert not mysql.accepts("aaa-1:5") and mysql.accepts("bbb:5")


def test_server_errors_become_retries_or_failures_that_say_what_to_do() -> None:
    import pymysql

    from connect.api import RetriableException
    from connectors.jdbc.mysql.faults import BinlogPurged, FatalDatabaseError, translate

    config = MySqlCdcConfig.parse(BASE)
    gone = translate(pymysql.err.OperationalError(2003, "Can't connect to MySQL server"), "streaming", config)
    assert isinstance(gone, RetriableException) and "db:3306" in str(gone)
    lost = translate(pymysql.err.OperationalError(2013, "Lost connection"), "reading the binlog", config)
    assert isinstance(lost, RetriableException)
    denied = translate(
        pymysql.err.OperationalError(1227, "Access denied; you need the REPLICATION SLAVE privilege"),
        "x",
        config,
    )
    assert (
        isinstance(denied, FatalDatabaseError)
        and "GRANT" in str(denied)
        and "REPLICATION SLAVE" in str(denied)
    )
    login = translate(pymysql.err.OperationalError(1045, "Access denied for user 'u'"), "x", config)
    assert "database.password" in str(login)
    purged = translate(
        pymysql.err.OperationalError(1236, "Could not find first log file name in binary log index file"),
        "x",
        config,
    )
    assert isinstance(purged, BinlogPurged) and "when_needed" in str(purged)
    twin = translate(
        pymysql.err.OperationalError(
            1236, "A slave with the same server_uuid/server_id as this slave has connected"
        ),
        "x",
        config,
    )
    assert "database.server.id=5400" in str(twin)
