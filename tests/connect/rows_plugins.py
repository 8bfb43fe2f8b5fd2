"""A source whose poll returns one ``SourceRecordBatch`` with a partition, a timestamp and
headers per record (as MirrorSourceTask copies a topic), and which records what the worker
tells it through ``commit_record`` and its batch form ``commit_records``."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Sequence

from connect.api import Schema, SourceConnector, SourceRecord, SourceRecordBatch, SourceTask, Task
from connect.api.task import RecordMetadata

BYTES = Schema.OPTIONAL_BYTES_SCHEMA
PARTITIONS = 3
TS0 = 1_700_000_000_000

# connector name -> (how, row number, metadata) for every acknowledgement
COMMITTED: dict[str, list[tuple[str, int, RecordMetadata | None]]] = defaultdict(list)
_lock = threading.Lock()


def headers_of(i: int) -> list[tuple[str, bytes | None]] | None:
    """Row i's headers: none, one, or two with a repeated key and a null value."""
    if i % 3 == 0:
        return None
    if i % 3 == 1:
        return [("n", b"%d" % i)]
    return [("n", b"%d" % i), ("n", None)]


class RowsConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return RowsTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


class RowsTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.name, self.topic, self.count = props["name"], props["topic"], int(props["count"])
        self.done = False

    def poll(self) -> Sequence[SourceRecord] | None:
        if self.done:
            time.sleep(0.05)
            return None
        self.done = True
        n = self.count
        return SourceRecordBatch(
            {"rows": self.name},
            [{"i": i} for i in range(n)],
            self.topic,
            BYTES,
            [b"v%d" % i for i in range(n)],
            key_schema=BYTES,
            keys=[b"k%d" % i for i in range(n)],
            kafka_partitions=[i % PARTITIONS for i in range(n)],
            timestamps=[TS0 + i for i in range(n)],
            headers=[headers_of(i) for i in range(n)],
            header_schema=BYTES,
        )

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert record.source_offset is not None
        with _lock:
            COMMITTED[self.name].append(("record", record.source_offset["i"], metadata))

    def commit_records(
        self, records: Sequence[SourceRecord], metadata: Sequence[RecordMetadata | None]
    ) -> None:
        if not isinstance(records, SourceRecordBatch):
            super().commit_records(records, metadata)
            return
        with _lock:
            for offset, meta in zip(records.source_offsets, metadata, strict=True):
                assert offset is not None
                COMMITTED[self.name].append(("batch", offset["i"], meta))

    def stop(self) -> None:
        pass
