"""PostgresCdcSourceTask driven directly, as the worker drives it (poll, offsets stored in order, commit),
with the runtime's own task context and offset store, against a real PostgreSQL: when the
slot may advance, what a restart resumes from, and a crash during the snapshot."""

from __future__ import annotations

import time
from typing import Any

from connect.api import SourceRecord
from connect.storage.offsets import MemoryOffsetBackingStore
from connectors.jdbc.cdc import PostgresCdcSourceTask
from tests.connectors.jdbc.test_cdc_support import CdcDatabase, TaskDriver, cdc_db, lsn, workers

FIXTURES = (cdc_db, workers)
CONNECTOR = "cdc"


class Worker(TaskDriver):
    """A PostgresCdcSourceTask's worker: polls, acknowledges, stores offsets in order."""

    task: PostgresCdcSourceTask

    def __init__(self, config: dict[str, str], store: MemoryOffsetBackingStore | None = None) -> None:
        super().__init__(PostgresCdcSourceTask(), CONNECTOR, config, store)

    def poll_until(self, count: int, timeout: float = 20) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"only {len(out)} of {count} records: {[brief(r) for r in out]}")
            out.extend(self.task.poll() or [])
        return out

    def quiet(self, polls: int = 5) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        for _ in range(polls):
            out.extend(self.task.poll() or [])
        return out

    def acknowledge(self, records: list[SourceRecord]) -> None:
        """Kafka acknowledged these records and every one polled before them: the worker
        stores the newest one's offset, then calls ``commit``."""
        if records:
            last = records[-1]
            assert last.source_partition is not None and last.source_offset is not None
            self.writer.write([(last.source_partition, last.source_offset)])
        self.task.commit()


def brief(record: SourceRecord) -> tuple[Any, ...]:
    key = record.key.get("id") if record.key is not None else None
    if record.value is None:
        return ("tombstone", key)
    return (record.value.get("op"), key, record.value.get("source").get("snapshot"))


def confirmed(db: CdcDatabase, slot: str) -> int:
    info = db.slot(slot)
    assert info is not None
    return lsn(info["confirmed_flush_lsn"])


def wait_confirmed(db: CdcDatabase, slot: str, at_least: int, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while (now := confirmed(db, slot)) < at_least:
        if time.monotonic() > deadline:
            raise AssertionError(f"slot {slot} confirmed {now:X}, expected at least {at_least:X}")
        time.sleep(0.05)
    return now


def test_the_slot_advances_only_past_acknowledged_transactions(
    cdc_db: CdcDatabase, workers: list[Worker]
) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)")
    config = cdc_db.config("srv", snapshot_mode="no_data")
    worker = Worker(config)
    workers.append(worker)
    assert worker.quiet(3) == []  # slot created, streaming
    slot = config["slot.name"]
    start = confirmed(cdc_db, slot)

    cdc_db.transaction("INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)")
    first = worker.poll_until(2)
    after_first = lsn(cdc_db.value("SELECT pg_current_wal_lsn()::text"))
    cdc_db.run("INSERT INTO t VALUES (3)")
    after_second = lsn(cdc_db.value("SELECT pg_current_wal_lsn()::text"))
    second = worker.poll_until(1)

    worker.acknowledge([first[0]])  # half of the first transaction
    worker.quiet(2)
    time.sleep(0.3)
    assert confirmed(cdc_db, slot) == start  # nothing confirmed: the transaction is not all in Kafka

    worker.acknowledge([first[1]])
    worker.quiet(2)
    assert wait_confirmed(cdc_db, slot, after_first) >= after_first
    assert confirmed(cdc_db, slot) < after_second  # the second transaction is not stored yet

    worker.acknowledge(second)
    worker.quiet(2)
    assert wait_confirmed(cdc_db, slot, after_second) >= after_second


def test_restart_resumes_after_the_stored_offset_without_repeating(
    cdc_db: CdcDatabase, workers: list[Worker]
) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)")
    config = cdc_db.config("srv", snapshot_mode="no_data")
    worker = Worker(config)
    workers.append(worker)
    worker.quiet(3)
    cdc_db.transaction(*(f"INSERT INTO t VALUES ({i})" for i in range(1, 6)))
    records = worker.poll_until(5)
    # Kafka acknowledged the first three records (offsets stored), then the worker died:
    # the slot was never told, the last two records were lost in flight.
    last = records[2]
    assert last.source_partition is not None and last.source_offset is not None
    worker.writer.write([(last.source_partition, last.source_offset)])
    worker.stop()
    workers.remove(worker)
    cdc_db.wait_slot_inactive(config["slot.name"])

    again = Worker(config, worker.store)
    workers.append(again)
    resent = again.poll_until(2)
    assert [brief(r) for r in resent] == [("c", 4, "false"), ("c", 5, "false")]
    cdc_db.run("INSERT INTO t VALUES (6)")
    assert [brief(r) for r in again.poll_until(1)] == [("c", 6, "false")]


def test_a_crash_during_the_snapshot_means_a_new_snapshot_that_fits_the_stream(
    cdc_db: CdcDatabase, workers: list[Worker]
) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t SELECT generate_series(1, 5)")
    config = cdc_db.config("srv", max_batch_size="2")
    worker = Worker(config)
    workers.append(worker)
    partial = worker.poll_until(2)
    assert [brief(r) for r in partial] == [("r", i, "true") for i in range(1, len(partial) + 1)]
    assert len(partial) < 5
    worker.acknowledge(partial)  # the offset now says "snapshot in progress"
    slot_before = cdc_db.rows(
        f"SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = '{config['slot.name']}'"
    )
    worker.stop()
    workers.remove(worker)
    cdc_db.run("INSERT INTO t VALUES (6)", "DELETE FROM t WHERE id = 1")  # while the connector is down

    again = Worker(config, worker.store)
    workers.append(again)
    snapshot = again.poll_until(5)
    assert [brief(r) for r in snapshot] == [
        ("r", 2, "true"),
        ("r", 3, "true"),
        ("r", 4, "true"),
        ("r", 5, "true"),
        ("r", 6, "last"),
    ]
    assert (
        snapshot[-1].source_offset is not None and snapshot[-1].source_offset["last_snapshot_record"] is True
    )
    # The interrupted snapshot's slot was replaced by one whose start matches the new snapshot.
    slot_after = cdc_db.rows(
        f"SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = '{config['slot.name']}'"
    )
    assert slot_after != slot_before
    again.acknowledge(snapshot)
    cdc_db.run("UPDATE t SET id = 7 WHERE id = 6")
    assert [brief(r) for r in again.poll_until(3)] == [("d", 6, "false"), ("tombstone", 6), ("c", 7, "false")]
    assert again.quiet(3) == []
