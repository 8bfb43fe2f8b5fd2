"""FileStreamSinkConnector: every record's value, one per line, appended to a file (or stdout).

Values read by StringConverter come as the UTF-8 bytes consumed (``accepts_text_runs``):
the line written is the same, with no string made per record.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Collection, Mapping
from typing import BinaryIO, TextIO, cast

from connect.api import (
    CommaList,
    ConnectException,
    ConnectorConfig,
    Field,
    SinkConnector,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    Task,
    TopicPartition,
    importance,
)

log = logging.getLogger(__name__)

VERSION = "1.0"


class FileStreamSinkConfig(ConnectorConfig):
    file: str | None = Field(
        None,
        alias="file",
        description="Destination filename. If not specified, the standard output will be used",
        json_schema_extra=importance("HIGH"),
    )
    topics: CommaList = Field(default_factory=list, alias="topics")


class FileStreamSinkConnector(SinkConnector):
    Config = FileStreamSinkConfig
    aliases = ("org.apache.kafka.connect.file.FileStreamSinkConnector",)

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class FileStreamSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = FileStreamSinkConfig.parse(props)
        self.filename = config.file
        if self.filename:
            try:
                self.out: BinaryIO = open(self.filename, "ab")  # noqa: SIM115 - closed in stop()
            except OSError as exc:
                raise ConnectException(f"couldn't open {self.filename} for writing: {exc}") from exc
        else:
            sys.stdout.flush()  # what was printed before comes before the records
            buffer = getattr(sys.stdout, "buffer", None)
            # A stdout with no bytes underneath (a notebook's, a redirect to StringIO) gets text.
            self.out = buffer if buffer is not None else cast(BinaryIO, _TextWriter(sys.stdout))

    def accepts_text_runs(self) -> bool:
        return True

    def put(self, records: Collection[SinkRecord]) -> None:
        if isinstance(records, SinkRecordBatch) and records.kind == "text":
            # Each text is a value's UTF-8 bytes: the line as the records would write it.
            data = b"".join(b"\n".join(run.texts) + b"\n" for run in records.text_runs)
        else:
            lines = [v if type(v) is str else _text(v) for v in [r.value for r in records]]
            lines.append("")
            data = "\n".join(lines).encode()
        self.out.write(data)
        # Readers tailing the file see each batch at once; durability comes with flush().
        self.out.flush()

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        self.out.flush()
        if self.filename:
            os.fsync(self.out.fileno())

    def stop(self) -> None:
        if self.filename and not self.out.closed:
            self.out.close()


class _TextWriter:
    """The bytes the sink writes, decoded, into a text stream."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, data: bytes) -> int:
        return self.stream.write(data.decode())

    def flush(self) -> None:
        self.stream.flush()


def _text(value: object) -> str:
    if value is None:
        return "null"  # what Java's println prints for a tombstone
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
