"""Tests of connectors.file: FileStreamSourceTask / FileStreamSinkTask driven directly, with the
runtime's real source task context and offset store (Kafka's FileStream connectors: partition
``{"filename": path}``, offset ``{"position": <byte offset after the line>}``)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from connect.api import Schema, SinkRecord, SinkRecordBatch, SourceRecord, TopicPartition
from connect.api.errors import ConnectException
from connect.api.task import ErrantRecordReporter, SinkTaskContext
from connect.runtime.source_task import _SourceTaskContext
from connect.storage.offsets import ConnectorOffsetReader, MemoryOffsetBackingStore, OffsetStorageWriter
from connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

CONNECTOR = "file-source"


def start_source(
    path: Path, store: MemoryOffsetBackingStore | None = None, **extra: str
) -> tuple[FileStreamSourceTask, dict[str, str]]:
    config = {"file": str(path), "topic": "lines", **extra}
    task = FileStreamSourceTask()
    task.initialize(
        _SourceTaskContext(config, ConnectorOffsetReader(store or MemoryOffsetBackingStore(), CONNECTOR))
    )
    task.start(config)
    return task, config


def poll(task: FileStreamSourceTask) -> list[SourceRecord]:
    return task.poll() or []


def poll_until(task: FileStreamSourceTask, count: int, max_polls: int = 8) -> list[list[SourceRecord]]:
    """Poll until ``count`` records came (or ``max_polls`` polls); the batches as returned."""
    batches: list[list[SourceRecord]] = []
    for _ in range(max_polls):
        got = task.poll()
        if got:
            batches.append(got)
        if sum(len(b) for b in batches) >= count:
            break
    return batches


def values(records: list[SourceRecord]) -> list[object]:
    return [r.value for r in records]


def positions(records: list[SourceRecord]) -> list[int]:
    assert all(r.source_offset is not None for r in records)
    return [r.source_offset["position"] for r in records]  # type: ignore[index]


# -- source: reading ---------------------------------------------------------------------------------


def test_source_reads_lines_with_kafkas_partition_and_offsets(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"first\nsecond line\n\nlast\n")
    task, _ = start_source(path)
    records = poll(task)
    assert values(records) == ["first", "second line", "", "last"]
    assert positions(records) == [6, 18, 19, 24]
    for r in records:
        assert r.source_partition == {"filename": str(path)}
        assert r.topic == "lines"
        assert r.kafka_partition is None
        assert r.key is None and r.key_schema is None
        assert r.value_schema is Schema.STRING_SCHEMA
    assert task.version() == "1.0"


def test_source_offsets_count_bytes_not_characters(tmp_path: Path) -> None:
    path = tmp_path / "utf8.txt"
    path.write_bytes("é\n日本\nx\n".encode())
    task, _ = start_source(path)
    records = poll(task)
    assert values(records) == ["é", "日本", "x"]
    assert positions(records) == [3, 10, 12]


def test_source_crlf_lines(tmp_path: Path) -> None:
    path = tmp_path / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\n")
    task, _ = start_source(path)
    records = poll(task)
    assert values(records) == ["one", "two", "three"]
    assert positions(records) == [5, 10, 16]


def test_source_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nhalf")
    task, _ = start_source(path)
    records = poll(task)
    assert values(records) == ["a"]
    assert positions(records) == [2]
    assert poll(task) == []
    with path.open("ab") as f:
        f.write(b"-done\nnext")
    records = poll_until(task, 1)[0]
    assert values(records) == ["half-done"]
    assert positions(records) == [12]
    with path.open("ab") as f:
        f.write(b"\n")
    records = poll_until(task, 1)[0]
    assert values(records) == ["next"]
    assert positions(records) == [17]


def test_source_follows_a_growing_file(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"1\n")
    task, _ = start_source(path)
    assert values(poll(task)) == ["1"]
    assert poll(task) == []
    with path.open("ab") as f:
        f.write(b"2\n3\n")
    records = [r for b in poll_until(task, 2) for r in b]
    assert values(records) == ["2", "3"]
    assert positions(records) == [4, 6]


def test_source_batch_size_limits_each_poll(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nc\nd\ne\n")
    task, _ = start_source(path, **{"batch.size": "2"})
    first = poll(task)
    assert values(first) == ["a", "b"]
    assert positions(first) == [2, 4]


def test_source_batch_size_delivers_every_line_of_a_file_that_stopped_growing(tmp_path: Path) -> None:
    """Lines beyond batch.size come in the next polls, not only once the file grows again."""
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nc\nd\ne\n")
    task, _ = start_source(path, **{"batch.size": "2"})
    batches = poll_until(task, 5, max_polls=6)
    assert [values(b) for b in batches] == [["a", "b"], ["c", "d"], ["e"]]
    assert [positions(b) for b in batches] == [[2, 4], [6, 8], [10]]


def test_source_lines_beyond_the_batch_are_delivered_when_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nc\n")
    task, _ = start_source(path, **{"batch.size": "2"})
    assert values(poll(task)) == ["a", "b"]
    with path.open("ab") as f:
        f.write(b"d\ne\n")
    records = [r for b in poll_until(task, 3) for r in b]
    assert values(records) == ["c", "d", "e"]
    assert positions(records) == [6, 8, 10]


# -- source: offsets, truncation, rotation -------------------------------------------------------------


def test_source_resumes_from_the_stored_offset(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"aa\nbb\ncc\n")
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, CONNECTOR).write([({"filename": str(path)}, {"position": 3})])
    task, _ = start_source(path, store)
    records = poll(task)
    assert values(records) == ["bb", "cc"]
    assert positions(records) == [6, 9]


def test_source_offsets_of_other_connectors_or_files_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"aa\nbb\n")
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, "another-connector").write([({"filename": str(path)}, {"position": 3})])
    OffsetStorageWriter(store, CONNECTOR).write(
        [({"filename": str(tmp_path / "other.txt")}, {"position": 3})]
    )
    task, _ = start_source(path, store)
    assert values(poll(task)) == ["aa", "bb"]


def test_source_resume_round_trip(tmp_path: Path) -> None:
    """The offsets a task emits are what a restarted task resumes from."""
    path = tmp_path / "in.txt"
    path.write_bytes(b"1\n22\n333\n")
    store = MemoryOffsetBackingStore()
    first, _ = start_source(path, store)
    records = poll(first)
    first.stop()
    # Only the first two were acknowledged and committed.
    OffsetStorageWriter(store, CONNECTOR).write([(records[1].source_partition, records[1].source_offset)])
    second, _ = start_source(path, store)
    assert values(poll(second)) == ["333"]


def test_source_stored_offset_past_the_end_restarts_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"new\n")
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, CONNECTOR).write([({"filename": str(path)}, {"position": 400})])
    task, _ = start_source(path, store)
    records = poll(task)
    assert values(records) == ["new"]
    assert positions(records) == [4]


@pytest.mark.parametrize("offset", [{"position": "12"}, {"position": 1.5}])
def test_source_invalid_stored_offset(tmp_path: Path, offset: dict[str, object]) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"x\n")
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, CONNECTOR).write([({"filename": str(path)}, offset)])
    with pytest.raises(ConnectException):
        start_source(path, store)


def test_source_truncated_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"aaaa\nbbbb\n")
    task, _ = start_source(path)
    assert values(poll(task)) == ["aaaa", "bbbb"]
    with path.open("r+b") as f:
        f.truncate(0)
        f.write(b"c\n")
    records = [r for b in poll_until(task, 1) for r in b]
    assert values(records) == ["c"]
    assert positions(records) == [2]


def test_source_rotated_file_is_read_from_the_start_after_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_bytes(b"old-1\n")
    task, _ = start_source(path)
    assert values(poll(task)) == ["old-1"]
    rotated = tmp_path / "app.log.1"
    os.rename(path, rotated)
    path.write_bytes(b"new-1\nnew-2\n")
    with rotated.open("ab") as f:  # written to the old file just before it was rotated
        f.write(b"old-2\n")
    assert os.stat(path).st_ino != os.stat(rotated).st_ino
    records = [r for b in poll_until(task, 3) for r in b]
    assert values(records) == ["old-2", "new-1", "new-2"]
    assert positions(records) == [12, 6, 12]
    assert {r.source_partition["filename"] for r in records} == {str(path)}  # type: ignore[index]


def test_source_rotation_does_not_lose_lines_beyond_the_batch(tmp_path: Path) -> None:
    """Lines of the old file that did not fit a batch are still delivered before the new file."""
    path = tmp_path / "app.log"
    path.write_bytes(b"a\nb\n")
    task, _ = start_source(path, **{"batch.size": "1"})
    assert values(poll(task)) == ["a"]
    os.rename(path, tmp_path / "app.log.1")
    path.write_bytes(b"n\n")
    records = [r for b in poll_until(task, 2) for r in b]
    assert values(records) == ["b", "n"]
    assert positions(records) == [4, 2]


def test_source_replaced_by_a_copy_of_the_same_size(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\n")
    task, _ = start_source(path)
    assert values(poll(task)) == ["one"]
    replacement = tmp_path / "in.txt.new"
    replacement.write_bytes(b"two\n")
    os.replace(replacement, path)
    records = [r for b in poll_until(task, 1) for r in b]
    assert values(records) == ["two"]
    assert positions(records) == [4]


def test_source_waits_for_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task, _ = start_source(path)
    assert poll(task) == []
    path.write_bytes(b"here\n")
    assert values(poll(task)) == ["here"]


def test_source_stop_ends_polling(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\n")
    task, _ = start_source(path)
    task.stop()
    assert task.poll() is None


# -- source connector ------------------------------------------------------------------------------------


def test_source_connector_validate_refuses_a_topic_list() -> None:
    connector = FileStreamSourceConnector()
    issues = connector.validate({"file": "/tmp/x", "topic": "a,b"})
    assert [i.key for i in issues] == ["topic"]
    assert "exactly one topic" in issues[0].message
    assert connector.validate({"file": "/tmp/x", "topic": "a"}) == []
    assert [i.key for i in connector.validate({"file": "/tmp/x"})] == ["topic"]
    assert [i.key for i in connector.validate({"topic": "a", "batch.size": "0"})] == ["batch.size"]


def test_source_connector_makes_one_task() -> None:
    connector = FileStreamSourceConnector()
    props = {"file": "/tmp/x", "topic": "a", "name": "n"}
    connector.start(props)
    assert connector.task_class() is FileStreamSourceTask
    assert connector.task_configs(5) == [props]
    assert connector.version() == "1.0"
    connector.stop()


# -- sink --------------------------------------------------------------------------------------------------


class HolderSinkContext(SinkTaskContext):
    """A plain holder of the values a sink task may ask for."""

    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.offsets: dict[TopicPartition, int] = {}
        self.timeout_ms = 0
        self.commit_requested = False
        self.paused: set[TopicPartition] = set()
        self.assigned = {TopicPartition("lines", 0)}

    def configs(self) -> dict[str, str]:
        return dict(self.config)

    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        if isinstance(offsets, TopicPartition):
            assert offset is not None
            self.offsets[offsets] = offset
        else:
            self.offsets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return None


def start_sink(path: Path) -> FileStreamSinkTask:
    config = {"file": str(path), "topics": "lines"}
    task = FileStreamSinkTask()
    task.initialize(HolderSinkContext(config))
    task.start(config)
    return task


def sink_records(*values: object, offset: int = 0) -> SinkRecordBatch:
    return SinkRecordBatch.of(
        [SinkRecord("lines", 0, None, None, None, v, kafka_offset=offset + i) for i, v in enumerate(values)]
    )


def test_sink_writes_values_one_per_line(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(sink_records("first", "second", offset=0))
    task.put(sink_records(b"bytes \xc3\xa9", 42, "", "日本", offset=2))
    task.flush({TopicPartition("lines", 0): 6})
    assert path.read_text(encoding="utf-8") == "first\nsecond\nbytes é\n42\n\n日本\n"
    task.stop()


def test_sink_flush_makes_records_durable_and_visible(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(sink_records(*(f"line {i}" for i in range(1000))))
    task.flush({TopicPartition("lines", 0): 1000})
    # Another reader (another process would do the same) sees everything after flush.
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines == [f"line {i}" for i in range(1000)]
    task.put(sink_records("after"))
    task.flush({})
    assert path.read_text(encoding="utf-8").splitlines()[-1] == "after"
    task.stop()


def test_sink_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("kept\n", encoding="utf-8")
    task = start_sink(path)
    task.put(sink_records("new"))
    task.flush({})
    task.stop()
    assert path.read_text(encoding="utf-8") == "kept\nnew\n"


def test_sink_stop_closes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(sink_records("x"))
    task.flush({})
    task.stop()
    assert task.out.closed
    task.stop()  # stopping twice is harmless
    with pytest.raises(ValueError):
        task.put(sink_records("too late"))
    assert path.read_text(encoding="utf-8") == "x\n"


def test_sink_stop_without_flush_keeps_what_was_put(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(sink_records("unflushed"))
    task.stop()
    assert path.read_text(encoding="utf-8") == "unflushed\n"


def test_sink_unwritable_file_fails_start(tmp_path: Path) -> None:
    task = FileStreamSinkTask()
    config = {"file": str(tmp_path / "no-such-dir" / "out.txt"), "topics": "lines"}
    task.initialize(HolderSinkContext(config))
    with pytest.raises(ConnectException) as info:
        task.start(config)
    assert "no-such-dir" in str(info.value)


def test_sink_pre_commit_flushes_and_returns_the_offsets(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(sink_records("a", "b"))
    offsets = {TopicPartition("lines", 0): 2}
    assert dict(task.pre_commit(offsets)) == offsets
    assert path.read_text(encoding="utf-8") == "a\nb\n"
    task.stop()


def test_sink_connector_makes_max_tasks_configs() -> None:
    connector = FileStreamSinkConnector()
    props = {"file": "/tmp/out", "topics": "a"}
    connector.start(props)
    assert connector.task_class() is FileStreamSinkTask
    assert connector.task_configs(3) == [props, props, props]
    assert connector.validate(props) == []
    connector.stop()


def test_source_lone_carriage_returns_end_lines_too(tmp_path: Path) -> None:
    """Kafka's extractLine ends a line at \\n, \\r or \\r\\n."""
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\rbb\r\ncc\n")
    task, _ = start_source(path)
    records = poll(task)
    assert values(records) == ["a", "bb", "cc"]
    assert positions(records) == [2, 6, 9]


def test_source_offset_without_a_position_starts_at_the_beginning(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"x\n")
    store = MemoryOffsetBackingStore()
    OffsetStorageWriter(store, CONNECTOR).write([({"filename": str(path)}, {"other": 1})])
    task, _ = start_source(path, store)
    assert values(poll(task)) == ["x"]


def test_sink_writes_tombstones_and_booleans_as_java_prints_them(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)
    task.put(
        SinkRecordBatch.of(
            [SinkRecord("t", 0, None, None, None, None), SinkRecord("t", 0, None, None, None, True)]
        )
    )
    task.flush({})
    task.stop()
    assert path.read_text() == "null\ntrue\n"


def test_sink_writes_text_runs_as_the_bytes_consumed_without_making_records(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = start_sink(path)

    def no_records() -> list[SinkRecord]:
        raise AssertionError("the sink read a record of a text batch")

    task.put(sink_records("first"))
    runs = [("lines", 0, [1, 2], ["café".encode(), b""]), ("lines", 1, [0], [b"x"])]
    task.put(SinkRecordBatch(runs, no_records, lambda form: form == "text"))
    task.put(sink_records(None, offset=3))
    task.flush({})
    task.stop()
    assert path.read_bytes() == "first\ncafé\n\nx\nnull\n".encode()


@pytest.mark.parametrize("stdout", ["bytes underneath", "text only"])
def test_sink_without_a_file_writes_to_stdout(stdout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8") if stdout == "bytes underneath" else io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    task = FileStreamSinkTask()
    task.initialize(HolderSinkContext({"topics": "lines"}))
    task.start({"topics": "lines"})
    task.put(sink_records("é", None))
    task.put(SinkRecordBatch([("lines", 0, [2], ["ü".encode()])], list, lambda form: form == "text"))
    task.flush({})
    task.stop()
    written = raw.getvalue() if stdout == "bytes underneath" else stream.getvalue().encode()
    assert written == "é\nnull\nü\n".encode()
