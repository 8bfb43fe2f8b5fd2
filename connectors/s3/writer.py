"""One topic partition's writer: records into open objects, rotations into the bucket.

Records of the partition go to one open object per partition path (the partitioner's
directory). A *rotation* closes them all at once when ``flush.size`` records have
arrived, when a record's time is ``rotate.interval.ms`` past the first one's, or at the
``rotate.schedule.interval.ms`` wall-clock boundary; its objects are uploaded with the
rotation's offset range in their metadata, the head object last (``objects`` says why).
Only then does ``committed`` move: consumer offsets never pass what is in S3.

A rotation whose upload fails transiently stays pending and is uploaded first by the
next call; the records the framework hands over again meanwhile (put() is retried with
the same batch) are recognised by offset and skipped.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from connect.api import DataException, SinkRecord, TopicPartition
from connectors.s3.config import S3SinkConfig
from connectors.s3.formats import Finished, Format, ObjectFile
from connectors.s3.objects import RANGE_END, RANGE_START, RECORDS, Naming
from connectors.s3.partitioners import (
    DefaultPartitioner,
    Partitioner,
    TimestampExtractor,
    floor_timestamp,
    parse_timezone,
)
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
    uploaded: set[str] = field(default_factory=set)


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
        self.tz = parse_timezone(config.timezone) if config.timezone else dt.UTC
        self.committed: int | None = None  # next offset after the last rotation in S3
        self.next_offset: int | None = None  # next offset after the last record taken
        self.open: dict[str, _Open] = {}
        self.range_start: int | None = None
        self.range_end = -1
        self.count = 0
        self.base_time: int | None = None
        self.scheduled: int | None = None  # the wall-clock rotation time of the open range
        self.pending: _Rotation | None = None
        # The default partitioner's directory depends on the partition only: made once.
        self.fixed_directory = (
            partitioner.encode_partition(_probe(tp), None)
            if isinstance(partitioner, DefaultPartitioner)
            else None
        )

    def resume_at(self, offset: int) -> None:
        self.committed = offset
        self.next_offset = offset

    # -- records -------------------------------------------------------------------------

    def write(self, record: SinkRecord, now_ms: int) -> None:
        """Take one record (may upload a rotation; raises ``TransientStoreError``)."""
        if self.pending is not None:
            self.flush_pending()
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

    def tick(self, now_ms: int) -> None:
        """The wall clock moved: rotate at the scheduled boundary, retry a pending upload."""
        self.flush_pending()
        if self.scheduled is not None and now_ms >= self.scheduled and self.range_start is not None:
            self.rotate()

    def position(self) -> int | None:
        """What may be committed: after the last rotation in S3, or after every record taken
        when none is open or pending (the rest were skipped: tombstones, refused records)."""
        if self.range_start is None and self.pending is None and self.next_offset is not None:
            return self.next_offset
        return self.committed

    # -- rotations -----------------------------------------------------------------------

    def rotate(self) -> None:
        if self.range_start is None:
            return
        self.pending = _Rotation(self.range_start, self.range_end, list(self.open.values()))
        self.open = {}
        self.range_start, self.range_end, self.count = None, -1, 0
        self.base_time = self.scheduled = None
        self.flush_pending()

    def flush_pending(self) -> None:
        rotation = self.pending
        if rotation is None:
            return
        # The head (the object holding the rotation's first record) goes last: its presence
        # in the bucket says the whole rotation is there.
        order = sorted(rotation.objects, key=lambda o: (o.start == rotation.start, o.start))
        metadata = {RANGE_START: str(rotation.start), RANGE_END: str(rotation.end)}
        for obj in order:
            if obj.key in rotation.uploaded:
                continue
            done = rotation.finished.get(obj.key)
            if done is None:
                done = rotation.finished[obj.key] = obj.file.finish()
                for record, reason in done.rejected:
                    self.report(record, reason)
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
            done.body.close()
            rotation.uploaded.add(obj.key)
        self.pending = None
        self.committed = rotation.end + 1
        log.debug(
            "%s: committed offsets %d..%d in %d objects", self.tp, rotation.start, rotation.end, len(order)
        )

    def discard(self) -> None:
        for obj in self.open.values():
            obj.file.discard()
        if self.pending is not None:
            for obj in self.pending.objects:
                done = self.pending.finished.get(obj.key)
                if done is not None:
                    done.body.close()
                else:
                    obj.file.discard()
        self.open, self.pending = {}, None

    def _next_boundary(self, now_ms: int) -> int | None:
        """The next multiple of rotate.schedule.interval.ms after now, in the time zone."""
        interval = self.config.rotate_schedule_interval_ms
        if interval <= 0:
            return None
        # The partitioner's flooring: the same wall-time periods, DST changes included.
        return floor_timestamp(now_ms, interval, self.tz) + interval


def _probe(tp: TopicPartition) -> SinkRecord:
    return SinkRecord(tp.topic, tp.partition, None, None, None, None, None, None, 0)
