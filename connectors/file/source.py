"""FileStreamSourceConnector: each line of a file becomes a record (Kafka's keys and offsets).

The source partition is ``{"filename": <file>}`` and the offset ``{"position": <byte
offset after the line>}``, exactly as Kafka's connector stores them, so a restart
resumes at the next unread line. A file that shrinks (truncated) is read again from
the start; a file replaced by another one (rotation: a new inode at the same path)
is read from the start once the old one has been read to its end. Without ``file``
the task reads standard input.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any, BinaryIO

from connect.api import (
    ConfigIssue,
    ConnectException,
    ConnectorConfig,
    ExactlyOnceSupport,
    Field,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
    Task,
    importance,
)

log = logging.getLogger(__name__)

VERSION = "1.0"
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
# How long to wait at the end of the file before looking again: short, so appended
# lines flow within milliseconds (Kafka's connector waits a second).
_IDLE_WAIT_S = 0.005
_READ_CHUNK = 1 << 20


class FileStreamSourceConfig(ConnectorConfig):
    file: str | None = Field(
        None,
        alias="file",
        description="Source filename. If not specified, the standard input will be used",
        json_schema_extra=importance("HIGH"),
    )
    topic: str = Field(
        alias="topic",
        min_length=1,
        description="The topic to publish data to",
        json_schema_extra=importance("HIGH"),
    )
    batch_size: int = Field(
        2000,
        alias="batch.size",
        ge=1,
        description="The maximum number of records the source task can read from the file each "
        "time it is polled",
        json_schema_extra=importance("LOW", kafka_type="INT"),
    )


class FileStreamSourceConnector(SourceConnector):
    Config = FileStreamSourceConfig
    aliases = ("org.apache.kafka.connect.file.FileStreamSourceConnector",)

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = FileStreamSourceConfig.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # One file, one reader: more tasks would read the same lines.
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        # A file (only appended to) is read again from an exact byte position; standard
        # input cannot be read again at all (Kafka's answer too).
        return (
            ExactlyOnceSupport.SUPPORTED
            if (props.get("file") or "").strip()
            else ExactlyOnceSupport.UNSUPPORTED
        )

    def validate(self, props: dict[str, str]) -> list[ConfigIssue]:  # type: ignore[override]
        issues = FileStreamSourceConfig.issues(props)
        topic = props.get("topic", "")
        if "," in topic:
            issues.append(
                ConfigIssue(
                    "topic", "'topic' in FileStreamSourceConnector configuration requires exactly one topic."
                )
            )
        return issues


class FileStreamSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = FileStreamSourceConfig.parse(props)
        self.topic = config.topic
        self.batch_size = config.batch_size
        self.filename = config.file
        self.stream: BinaryIO | None = None
        self.inode: int | None = None
        self.position = 0  # byte offset just after the last line handed out
        self.pending: list[bytes] = []  # whole lines read but not handed out yet
        self.next_line = 0
        self.partial = b""  # the unfinished last line
        self._stopping = False
        if self.filename:
            offset = self.context.offset_storage_reader().offset({FILENAME_FIELD: self.filename})
            pos = offset.get(POSITION_FIELD) if offset is not None else None
            if pos is not None:
                if not isinstance(pos, int) or isinstance(pos, bool) or pos < 0:
                    raise ConnectException(
                        f"stored offset {offset} of {self.filename}: the position is not a "
                        "non-negative integer"
                    )
                self.position = pos
                log.debug("resuming %s at byte %d", self.filename, pos)

    def _open(self) -> bool:
        if self.stream is not None:
            return True
        if not self.filename:
            self.stream = sys.stdin.buffer
            return True
        try:
            stream = open(self.filename, "rb")  # noqa: SIM115 - kept open across polls
        except FileNotFoundError:
            log.warning(
                "couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
                self.filename,
            )
            return False
        except OSError as exc:
            raise ConnectException(f"couldn't open {self.filename}: {exc}") from exc
        st = os.fstat(stream.fileno())
        if st.st_size < self.position:
            log.warning(
                "%s is shorter (%d bytes) than the stored position %d: it was truncated; reading from the "
                "start",
                self.filename,
                st.st_size,
                self.position,
            )
            self.position = 0
        stream.seek(self.position)
        self.stream = stream
        self.inode = st.st_ino
        self.pending, self.next_line, self.partial = [], 0, b""
        return True

    def _check_replaced(self) -> None:
        """Reopen when the path now names another file (rotation) or the file shrank (truncation)."""
        if self.stream is None or not self.filename:
            return
        try:
            st = os.stat(self.filename)
        except FileNotFoundError:
            return
        current = os.fstat(self.stream.fileno())
        if st.st_ino != self.inode:
            log.info("%s was replaced (rotation); reading the new file from the start", self.filename)
            self._close_stream()
            self.position = 0
        elif current.st_size < self.position:
            log.info("%s was truncated; reading from the start", self.filename)
            self._close_stream()
            self.position = 0

    def _close_stream(self) -> None:
        if self.stream is not None and self.stream is not sys.stdin.buffer:
            self.stream.close()
        self.stream = None
        self.pending, self.next_line, self.partial = [], 0, b""

    def _read_more(self) -> bool:
        """Read a chunk into whole lines (``pending``) and an unfinished tail (``partial``)."""
        assert self.stream is not None
        read = getattr(self.stream, "read1", self.stream.read)
        chunk = read(_READ_CHUNK)
        if not chunk:
            return False
        parts = (self.partial + chunk).split(b"\n")
        self.partial = parts.pop()
        self.pending = self.pending[self.next_line :] + parts
        self.next_line = 0
        return True

    def poll(self) -> Sequence[SourceRecord] | None:
        if self._stopping:
            return None
        if not self._open():
            time.sleep(1.0)
            return None
        if (
            len(self.pending) - self.next_line < self.batch_size
            and not self._read_more()
            and self.next_line >= len(self.pending)
        ):
            self._check_replaced()
            time.sleep(_IDLE_WAIT_S)
            return None
        lines = self.pending[self.next_line : self.next_line + self.batch_size]
        self.next_line += len(lines)
        if not lines:
            return None
        partition = {FILENAME_FIELD: self.filename}
        topic = self.topic
        schema = Schema.STRING_SCHEMA
        pos = self.position
        if b"\r" not in b"".join(lines):  # one C-speed scan of the batch, not one test per line
            # The common case in one comprehension: byte positions by running sum.
            ends = list(accumulate((len(raw) + 1 for raw in lines), initial=pos))[1:]
            self.position = ends[-1]
            # Columns, not a record a line: the worker makes records only if it needs them.
            return SourceRecordBatch(
                partition,
                [{POSITION_FIELD: end} for end in ends],
                topic,
                schema,
                [raw.decode("utf-8", "replace") for raw in lines],
            )
        records = []
        for raw in lines:
            # A lone \r ends a line too (Kafka's extractLine); \r\n is one line end.
            pieces = raw.split(b"\r")
            crlf = pieces[-1] == b""
            if crlf:
                pieces.pop()
            if not pieces:
                pieces = [b""]
            for k, piece in enumerate(pieces):
                last = k == len(pieces) - 1
                pos += len(piece) + (2 if last and crlf else 1)
                records.append(
                    SourceRecord(
                        partition,
                        {POSITION_FIELD: pos},
                        topic,
                        None,
                        None,
                        None,
                        schema,
                        piece.decode("utf-8", "replace"),
                        None,
                    )
                )
        self.position = pos
        return records

    def stop(self) -> None:
        self._stopping = True

    def __del__(self) -> None:
        stream: Any = getattr(self, "stream", None)
        if stream is not None and stream is not sys.stdin.buffer:
            stream.close()
