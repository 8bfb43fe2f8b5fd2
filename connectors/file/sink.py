"""FileStreamSinkConnector: every record's value, one per line, appended to a file (or stdout).

Values read by StringConverter are written as the UTF-8 bytes consumed
(``records.value_runs("text")``): the line is the same, with no record made.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import BinaryIO, TextIO, cast

from connect.api import (
    CommaList,
    ConnectException,
    ConnectorConfig,
    Field,
    SinkConnector,
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

    def put(self, records: SinkRecordBatch) -> None:
        runs = records.value_runs("text")  # the values as the UTF-8 bytes consumed, where they are text
        if runs is not None:
            self.out.write(b"".join(b"\n".join(run.texts) + b"\n" for run in runs))
        else:
            self.out.write("".join([f"{_text(record.value)}\n" for record in records]).encode())
        self.out.flush()  # readers tailing the file see each batch at once; durability comes with flush()

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
