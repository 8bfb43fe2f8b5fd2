"""The S3 sink task: a ``PartitionWriter`` per assigned topic partition, resuming where the
bucket says the partition got, committing only what is in S3."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor

from connect.api import (
    ConnectException,
    DataException,
    RetriableException,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    TopicPartition,
)
from connect.api.retry import backoff_seconds
from connectors.s3.config import S3SinkConfig
from connectors.s3.errors import TransientStoreError
from connectors.s3.formats import make_format
from connectors.s3.objects import Naming, resume_offset
from connectors.s3.partitioners import (
    DefaultPartitioner,
    make_partitioner,
    make_timestamp_extractor,
    needs_timestamp,
)
from connectors.s3.writer import UPLOADS_IN_FLIGHT, PartitionWriter

log = logging.getLogger(__name__)

VERSION = "1.0"


class S3SinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.config = config = S3SinkConfig.parse(props)
        self.format = make_format(config)
        self.naming = Naming(
            config.topics_dir.strip(config.directory_delim),
            config.directory_delim,
            config.file_delim,
            config.filename_offset_zero_pad_width,
            self.format.extension,
        )
        self.partitioner = make_partitioner(
            config.partitioner_class.strip(),
            field_names=config.partition_field_name,
            path_format=config.path_format,
            partition_duration_ms=config.partition_duration_ms,
            locale=config.locale,
            timezone=config.timezone,
            directory_delim=config.directory_delim,
        )
        self.extractor = make_timestamp_extractor(config.timestamp_extractor, config.timestamp_field)
        # Whether writers of this configuration can copy values as the JSON text consumed.
        self.copies_json = PartitionWriter.takes_json_runs(
            config, self.format, self.partitioner, needs_timestamp(self.partitioner)
        )
        # boto3 is imported here, not with the module: see connectors.s3.errors.
        from connectors.s3.store import Store

        self.store = Store(config)
        self.store.check_bucket()
        self.writers: dict[TopicPartition, PartitionWriter] = {}
        # The task's upload threads: a partition's rotations go up two at a time (one of them
        # the oldest not yet in S3) while the task thread goes on with the next records.
        self.uploads = ThreadPoolExecutor(UPLOADS_IN_FLIGHT, thread_name_prefix="s3-upload")
        self.retries = 0  # consecutive put() calls that asked to be retried
        log.info("S3 sink writing %s objects to %s", config.format, self.store.where)

    # -- partitions ----------------------------------------------------------------------

    def open(self, partitions: Collection[TopicPartition]) -> None:
        resume = {}
        for tp in partitions:
            writer = self.writers[tp] = PartitionWriter(
                tp,
                self.config,
                self.format,
                self.naming,
                self.partitioner,
                self.extractor,
                needs_timestamp(self.partitioner),
                self.store,
                self._report,
                self.uploads,
            )
            prefix = self.naming.topic_prefix(tp.topic)
            if isinstance(self.partitioner, DefaultPartitioner):  # its directory names the partition
                prefix += f"partition={tp.partition}{self.config.directory_delim}"
            try:
                objects = self.naming.start_offsets(tp.topic, tp.partition, self.store.keys(prefix))
                offset = resume_offset(objects, self.store.metadata)
            except TransientStoreError as exc:
                # Without the bucket's word, the consumer's committed offsets are the position
                # (never ahead of S3, so at worst a rotation is written again).
                log.warning("%s: cannot read the bucket to recover the position: %s", tp, exc)
                offset = None
            if offset is not None:
                writer.resume_at(offset)
                resume[tp] = offset
        if resume:
            log.info(
                "Resuming from the objects in the bucket: %s",
                ", ".join(f"{tp}@{o}" for tp, o in sorted(resume.items())),
            )
            self.context.offset(resume)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            writer = self.writers.pop(tp, None)
            if writer is not None:
                writer.discard()  # not in S3, so not committed: the next owner writes it

    # -- records -------------------------------------------------------------------------

    def put(self, records: SinkRecordBatch) -> None:
        now = int(time.time() * 1000)
        try:
            for writer in self.writers.values():
                writer.tick(now)
            runs = records.value_runs("json") if self.copies_json else None
            if runs is not None:  # every value a JSON document: copied as the text consumed
                for run in runs:
                    self._writer(run.topic, run.partition).write_run(run, now)
                self.retries = 0
                return
            batch = records if isinstance(records, list) else list(records)
            i, n = 0, len(batch)
            while i < n:  # records come in runs of one partition: each run to its writer at once
                first = batch[i]
                topic, partition = first.original_topic, first.original_kafka_partition
                j = i + 1
                while (
                    j < n
                    and batch[j].original_kafka_partition == partition
                    and batch[j].original_topic == topic
                ):
                    j += 1
                self._writer(topic, partition or 0).write_many(batch[i:j], now)
                i = j
        except TransientStoreError as exc:
            self.retries += 1
            wait = backoff_seconds(min(self.retries, 8), self.config.s3_retry_backoff_ms)
            self.context.timeout(int(wait * 1000))
            raise RetriableException(str(exc), retry_after=wait) from None
        self.retries = 0

    def _writer(self, topic: str, partition: int) -> PartitionWriter:
        tp = TopicPartition(topic, partition)
        owner = self.writers.get(tp)
        if owner is None:
            raise ConnectException(f"A record of {tp}, which is not assigned to this task")
        return owner

    def pre_commit(self, current_offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        out = {}
        for tp in current_offsets:
            writer = self.writers.get(tp)
            position = writer.position() if writer is not None else None
            if position is not None:
                out[tp] = position
        return out

    def stop(self) -> None:
        store = getattr(self, "store", None)
        if store is not None:
            store.stopping.set()  # an upload in flight stops retrying
        for writer in getattr(self, "writers", {}).values():
            writer.discard()
        uploads = getattr(self, "uploads", None)
        if uploads is not None:
            uploads.shutdown(wait=True)
        if store is not None:
            store.close()

    def _report(self, record: SinkRecord, reason: str) -> None:
        error = DataException(reason if reason.startswith("Record ") else f"Record {record.where}: {reason}")
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise error
        reporter.report(record, error)
