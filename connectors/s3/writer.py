"""One topic partition's writer: records into open objects, rotations into the bucket.

Records of the partition go to one open object per partition path (the partitioner's
directory). A *rotation* closes them all at once when ``flush.size`` records have
arrived, when a record's time is ``rotate.interval.ms`` past the first one's, or at the
``rotate.schedule.interval.ms`` wall-clock boundary; its objects are uploaded with the
rotation's offset range in their metadata, the head object last (``objects`` says why).
Only then does ``committed`` move: consumer offsets never pass what is in S3.

Uploads run on the task's upload threads while the task goes on reading, so consuming,
converting and formatting the next rotation overlap with sending the last ones (boto3
waits on the network without the GIL). A partition's two oldest closed rotations upload at
once, so the server works on one while the next one's bytes arrive; a third waits for
the first to be in S3. The second may land first: it then names the first in its
metadata, and recovery goes back to the first if it is missing (``objects``). Consumer
offsets move in offset order only. A rotation whose upload fails transiently stays in the
queue and is tried again by the next call, which raises ``TransientStoreError``
meanwhile; the records the framework hands over again (put() is retried with the same
batch) are recognised by offset and skipped.

With the default partitioner, no record time and JSON lines, a run of records may come as
their values' JSON texts (``write_run``): the texts become the object's lines as they are,
with no SinkRecord made, decoded or encoded, which is most of the work per record.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import itertools
import logging
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from connect.api import DataException, Schema, SinkRecord, TopicPartition, ValueRun
from connectors.s3.config import S3SinkConfig
from connectors.s3.errors import TransientStoreError
from connectors.s3.formats import Finished, Format, ObjectFile
from connectors.s3.objects import PREVIOUS_START, RANGE_END, RANGE_START, RECORDS, Naming
from connectors.s3.partitioners import (
    DefaultPartitioner,
    Partitioner,
    TimestampExtractor,
    floor_timestamp,
    parse_timezone,
)
from connectors.s3.schema_compatibility import project, should_change

if TYPE_CHECKING:
    from connectors.s3.store import Store

log = logging.getLogger(__name__)

Report = Callable[[SinkRecord, str], None]


@dataclass
class _Open:
    key: str
    start: int
    file: ObjectFile


@dataclass
class _Rotation:
    start: int
    end: int
    objects: list[_Open]
    finished: dict[str, Finished] = field(default_factory=dict)
    uploaded: set[str] = field(default_factory=set)  # touched by the upload thread only while it runs
    upload: Future[None] | None = None  # the upload in flight (or finished, not yet collected)
    # The start of the rotation before it when that one was not yet in S3 as its upload began.
    previous: int | None = None


# Closed rotations not yet all in S3, per partition: both upload at once; a third waits for
# the first to be in S3 (bounded memory, and at most one rotation the bucket may lack
# behind one it has: see objects).
MAX_QUEUED_ROTATIONS = 2
UPLOADS_IN_FLIGHT = MAX_QUEUED_ROTATIONS


class PartitionWriter:
    def __init__(
        self,
        tp: TopicPartition,
        config: S3SinkConfig,
        fmt: Format,
        naming: Naming,
        partitioner: Partitioner,
        extractor: TimestampExtractor,
        needs_time: bool,
        store: Store,
        report: Report,
        uploads: Executor,
    ) -> None:
        self.tp = tp
        self.config = config
        self.fmt = fmt
        self.naming = naming
        self.partitioner = partitioner
        self.extractor = extractor
        self.needs_time = needs_time or config.rotate_interval_ms > 0
        self.store = store
        self.report = report
        self.uploads = uploads
        self.tz = parse_timezone(config.timezone) if config.timezone else dt.UTC
        self.committed: int | None = None  # next offset after the last rotation in S3
        self.next_offset: int | None = None  # next offset after the last record taken
        self.open: dict[str, _Open] = {}
        # Per directory, the value schema its files are written with (schema.compatibility);
        # kept across rotations, as Confluent's writer keeps it.
        self.schemas: dict[str, Schema | None] = {}
        self.range_start: int | None = None
        self.range_end = -1
        self.count = 0
        self.base_time: int | None = None
        self.scheduled: int | None = None  # the wall-clock rotation time of the open range
        self.rotations: deque[_Rotation] = deque()  # closed, not yet all in S3; oldest first
        # The default partitioner's directory depends on the partition only: made once.
        self.fixed_directory = (
            partitioner.encode_partition(_probe(tp), None)
            if isinstance(partitioner, DefaultPartitioner)
            else None
        )

    @staticmethod
    def takes_json_runs(
        config: S3SinkConfig, fmt: Format, partitioner: Partitioner, needs_time: bool
    ) -> bool:
        """Whether writers of this configuration can take values as JSON text (``write_run``):
        every record goes to one directory, no record's time is read, and the format copies
        JSON text."""
        return (
            fmt.copies_json_text
            and isinstance(partitioner, DefaultPartitioner)
            and not needs_time
            and config.rotate_interval_ms <= 0
        )

    def resume_at(self, offset: int) -> None:
        self.committed = offset
        self.next_offset = offset

    # -- records -------------------------------------------------------------------------

    def write(self, record: SinkRecord, now_ms: int) -> None:
        """Take one record (may start a rotation's upload; raises ``TransientStoreError``)."""
        if len(self.rotations) >= MAX_QUEUED_ROTATIONS:
            self.flush_pending(wait=True)
        offset = record.original_kafka_offset
        if self.next_offset is not None and offset < self.next_offset:
            return  # handed over again after a retried put(): already taken
        if record.value is None and self.config.behavior_on_null_values == "ignore":
            self.next_offset = offset + 1
            return
        try:
            if record.value is None:
                raise DataException(
                    f"Record {record.where} has a null value (a tombstone) and behavior.on.null.values=fail"
                )
            time_ms = self.extractor.extract(record, now_ms) if self.needs_time else None
            if (
                self.config.rotate_interval_ms > 0
                and self.base_time is not None
                and time_ms is not None
                and time_ms - self.base_time >= self.config.rotate_interval_ms
            ):
                self.rotate()  # the record opens the next rotation
            directory = self.fixed_directory or self.partitioner.encode_partition(record, time_ms)
            record = self._in_current_schema(directory, record)
            target = self.open.get(directory)
            if target is None:
                file = self.fmt.open()
                file.append(record)
                key = self.naming.key(record.topic, directory, self.tp.partition, offset)
                self.open[directory] = _Open(key, offset, file)
            else:
                target.file.append(record)
        except DataException as exc:
            self.next_offset = offset + 1
            self.report(record, str(exc))
            return
        if self.range_start is None:
            self.range_start = offset
            self.base_time = time_ms
            self.scheduled = self._next_boundary(now_ms)
        self.range_end = offset
        self.count += 1
        self.next_offset = offset + 1
        if self.count >= self.config.flush_size:
            self.rotate()

    def _in_current_schema(self, directory: str, record: SinkRecord) -> SinkRecord:
        """The record as the directory's files take it: by ``schema.compatibility``, either
        its schema becomes the current one (committing the open files first) or it is
        projected to the current one. Raises ``DataException`` (a ``SchemaProjectorException``)
        when it can be neither."""
        level = self.config.schema_compatibility
        if directory not in self.schemas:
            self.schemas[directory] = record.value_schema
            return record
        current = self.schemas[directory]
        if should_change(level, record.value_schema, current):
            self.schemas[directory] = record.value_schema
            if directory in self.open:
                self.rotate()  # a new schema: the open objects are committed, the record starts anew
            return record
        return project(level, record, current)

    def write_many(self, records: Sequence[SinkRecord], now_ms: int) -> None:
        """Take a run of this partition's records (in offset order). Where no record needs a
        look of its own (the default partitioner's one directory, no record time, no nulls,
        all encodable) they go to the open object a rotation's worth at a time; anything else
        goes through ``write`` one by one, with the same outcome."""
        if self.fixed_directory is None or self.needs_time:
            for record in records:
                self.write(record, now_ms)
            return
        flush_size = self.config.flush_size
        i, n = 0, len(records)
        while i < n:
            record = records[i]
            skipped = self.next_offset is not None and record.original_kafka_offset < self.next_offset
            target = self.open.get(self.fixed_directory)
            waiting = len(self.rotations) >= MAX_QUEUED_ROTATIONS
            if skipped or waiting or self.range_start is None or target is None:
                self.write(record, now_ms)  # skips, opens a rotation, or waits for an upload
                i += 1
                continue
            chunk = records[i : i + flush_size - self.count]
            current = self.schemas.get(self.fixed_directory)
            if any(
                r.value is None or (r.value_schema is not current and r.value_schema != current)
                for r in chunk
            ) or not target.file.extend(chunk):
                self.write(record, now_ms)
                i += 1
                continue
            self.range_end = chunk[-1].original_kafka_offset
            self.next_offset = self.range_end + 1
            self.count += len(chunk)
            i += len(chunk)
            if self.count >= flush_size:
                self.rotate()

    def write_run(self, run: ValueRun, now_ms: int) -> None:
        """Take a run of this partition's records as their values' JSON texts, with the
        outcome ``write_many`` would have (only where ``takes_json_runs``). A text the
        format cannot copy (one spanning lines) is written as its record."""
        offsets, texts = run.offsets, run.texts
        directory = self.fixed_directory
        assert directory is not None and not self.needs_time
        if self.schemas.setdefault(directory, None) is not None:
            # Files written with a schema: these schemaless values are refused one by one.
            for record in run.records:
                self.write(record, now_ms)
            return
        flush_size = self.config.flush_size
        i, n = 0, len(texts)
        if self.next_offset is not None and offsets[0] < self.next_offset:
            i = bisect_left(offsets, self.next_offset)  # handed over again after a retried put()
        while i < n:
            if len(self.rotations) >= MAX_QUEUED_ROTATIONS:
                self.flush_pending(wait=True)
            target = self.open.get(directory)
            file = target.file if target is not None else self.fmt.open()
            took = file.extend_texts(texts[i : i + min(n - i, flush_size - self.count)])
            if not took:
                if target is None:
                    file.discard()
                self.write(run.records[i], now_ms)  # the records are made for it
                i += 1
                continue
            if target is None:
                key = self.naming.key(self.tp.topic, directory, self.tp.partition, offsets[i])
                self.open[directory] = _Open(key, offsets[i], file)
            if self.range_start is None:
                self.range_start = offsets[i]
                self.scheduled = self._next_boundary(now_ms)
            self.range_end = offsets[i + took - 1]
            self.next_offset = self.range_end + 1
            self.count += took
            i += took
            if self.count >= flush_size:
                self.rotate()

    def tick(self, now_ms: int) -> None:
        """The wall clock moved: rotate at the scheduled boundary, collect finished uploads and
        retry a failed one."""
        self.flush_pending()
        if self.scheduled is not None and now_ms >= self.scheduled and self.range_start is not None:
            self.rotate()

    def position(self) -> int | None:
        """What may be committed: after the last rotation in S3, or after every record taken
        when none is open or pending (the rest were skipped: tombstones, refused records)."""
        with contextlib.suppress(TransientStoreError):  # reported by the next put()
            self.flush_pending()
        if self.range_start is None and not self.rotations and self.next_offset is not None:
            return self.next_offset
        return self.committed

    # -- rotations -----------------------------------------------------------------------

    def rotate(self) -> None:
        """Close the open objects into a rotation and start its upload when it is first in line."""
        if self.range_start is None:
            return
        self.rotations.append(_Rotation(self.range_start, self.range_end, list(self.open.values())))
        self.open = {}
        self.range_start, self.range_end, self.count = None, -1, 0
        self.base_time = self.scheduled = None
        self.flush_pending()

    def flush_pending(self, wait: bool = False) -> None:
        """Start the uploads of the oldest rotations and collect finished ones in order
        (moving ``committed``). With ``wait``, block until the oldest rotation is in S3.
        Raises ``TransientStoreError`` when the oldest one's upload failed; it is uploaded
        again by the next call."""
        while self.rotations:
            for rotation in itertools.islice(self.rotations, UPLOADS_IN_FLIGHT):
                if rotation.upload is None:
                    self._start_upload(rotation)
            head = self.rotations[0]
            assert head.upload is not None
            if not (wait or head.upload.done()):
                return
            try:
                head.upload.result()
            except TransientStoreError:
                head.upload = None  # its objects' bodies are kept: the next call sends them again
                raise
            wait = False  # one rotation was asked for; later ones are collected if done
            self.rotations.popleft()
            self.committed = head.end + 1
            log.debug(
                "%s: committed offsets %d..%d in %d objects", self.tp, head.start, head.end, len(head.objects)
            )

    def _start_upload(self, rotation: _Rotation) -> None:
        # Objects are finished here, on the task's thread, so records they refuse are reported
        # (dead letter queue) before any of the rotation is in S3 and can be committed.
        for obj in rotation.objects:
            if obj.key not in rotation.finished:
                done = rotation.finished[obj.key] = obj.file.finish()
                for record, reason in done.rejected:
                    self.report(record, reason)
        # Uploading beside the one before it, it may land first: its objects name that one,
        # so that recovery goes back to it should it never land (objects.resume_offset).
        before = self.rotations[0] if rotation is not self.rotations[0] else None
        rotation.previous = before.start if before is not None and _has_head(before) else None
        # In a copy of this thread's context, so the upload's log lines carry [connector|task-N].
        rotation.upload = self.uploads.submit(contextvars.copy_context().run, self._upload, rotation)

    def _upload(self, rotation: _Rotation) -> None:
        """On the upload thread: the rotation's objects, the head object (holding the
        rotation's first record) last: its presence in the bucket says the whole rotation is there."""
        order = sorted(rotation.objects, key=lambda o: (o.start == rotation.start, o.start))
        metadata = {RANGE_START: str(rotation.start), RANGE_END: str(rotation.end)}
        if rotation.previous is not None:
            metadata[PREVIOUS_START] = str(rotation.previous)
        for obj in order:
            if obj.key in rotation.uploaded:
                continue
            done = rotation.finished[obj.key]
            if done.rows:
                done.body.seek(0)
                self.store.upload(
                    obj.key,
                    done.body,
                    done.size,
                    {**metadata, RECORDS: str(done.rows)},
                    self.fmt.content_type,
                    self.fmt.content_encoding,
                )
            rotation.uploaded.add(obj.key)
        for done in rotation.finished.values():
            done.body.close()

    def discard(self) -> None:
        """Drop what is not in S3 (the partition is closed). An upload in flight is let finish
        first: the partition's next owner reads the bucket to know where to resume."""
        for obj in self.open.values():
            obj.file.discard()
        for rotation in self.rotations:
            if rotation.upload is not None:
                with contextlib.suppress(Exception):
                    rotation.upload.result()
            for obj in rotation.objects:
                done = rotation.finished.get(obj.key)
                if done is not None:
                    done.body.close()
                else:
                    obj.file.discard()
        self.open, self.rotations = {}, deque()

    def _next_boundary(self, now_ms: int) -> int | None:
        """The next multiple of rotate.schedule.interval.ms after now, in the time zone."""
        interval = self.config.rotate_schedule_interval_ms
        if interval <= 0:
            return None
        # The partitioner's flooring: the same wall-time periods, DST changes included.
        return floor_timestamp(now_ms, interval, self.tz) + interval


def _has_head(rotation: _Rotation) -> bool:
    """Whether the rotation's head object is one to upload (it holds a record)."""
    return any(o.start == rotation.start and rotation.finished[o.key].rows for o in rotation.objects)


def _probe(tp: TopicPartition) -> SinkRecord:
    return SinkRecord(tp.topic, tp.partition, None, None, None, None, None, None, 0)
