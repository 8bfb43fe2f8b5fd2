"""MirrorCheckpointTask: consumer-group offsets on the source, translated, as checkpoints.

As Kafka's ``MirrorCheckpointTask``:

- On start, in the background: the checkpoints this flow already wrote
  (``<source>.checkpoints.internal`` on the target) are read back into the
  ``CheckpointStore``, so a restarted task goes on from them rather than emitting a
  downstream offset older than one already published; then the offset-syncs topic is read
  from the beginning into the ``OffsetSyncStore`` and tailed from there on. Nothing is
  translated before that first read to the end.
- Every ``emit.checkpoints.interval.seconds``: each assigned group's committed offsets on the
  source are listed; those of topics the topic filter accepts are translated
  (``translate_downstream``), renamed for the target (``A.orders``, or back to ``orders``
  for a topic that came from the target) and emitted as ``Checkpoint`` records to partition
  0 of the checkpoints topic when the store says they are new, advanced or rewound.
- With ``sync.group.offsets.enabled``, every ``sync.group.offsets.interval.seconds`` the last
  checkpoints are committed into idle target groups (``group_offsets``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence

from confluent_kafka import KafkaException, Message
from confluent_kafka.admin import AdminClient

from connect.api import (
    ConnectException,
    DataException,
    RetriableException,
    Schema,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from connect.api.kafka_groups import GroupClients
from connectors.mirror.checkpoint_store import CheckpointStore
from connectors.mirror.config import MirrorCheckpointConfig, offset_syncs_cluster
from connectors.mirror.formats import Checkpoint, OffsetSync
from connectors.mirror.group_offsets import sync_group_offsets
from connectors.mirror.offset_sync_store import OffsetSyncStore
from connectors.mirror.policy import ReplicationPolicy
from connectors.mirror.topic_reader import read_partition

log = logging.getLogger(__name__)

VERSION = "1.0"
TASK_GROUPS_KEY = "task.assigned.groups"


def assigned_groups(props: Mapping[str, str]) -> list[str]:
    """The task's ``task.assigned.groups``."""
    if TASK_GROUPS_KEY not in props:
        raise ConnectException(f"MirrorCheckpointTask needs {TASK_GROUPS_KEY} (set by its connector)")
    return [g.strip() for g in props[TASK_GROUPS_KEY].split(",") if g.strip()]


def rename_topic(policy: ReplicationPolicy, topic: str, source_alias: str, target_alias: str) -> str:
    """The target's name of source topic ``topic`` (Kafka's ``renameTopicPartition``): a topic
    that came from the target goes back to its own name, any other gets the source prefix."""
    if policy.topic_source(topic) == target_alias:
        return policy.original_topic(topic)
    return policy.format_remote_topic(source_alias, topic)


class MirrorCheckpointTask(SourceTask):
    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._initialized = threading.Event()
        self._lock = threading.Lock()  # the sync store: filled by the reader, read by poll
        self._threads: list[threading.Thread] = []
        self._groups: list[str] = []
        self._clients: list[GroupClients] = []  # closed by stop()

    def version(self) -> str:
        return VERSION

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        config = MirrorCheckpointConfig.parse(props)
        self._config = config
        self._groups = assigned_groups(props)
        self._source = config.source_cluster_alias
        self._target = config.target_cluster_alias
        self._policy = config.replication_policy()
        self._checkpoints_topic = config.checkpoints_topic()
        self._offset_syncs_location = offset_syncs_cluster(config)
        self._offset_syncs_topic = config.offset_syncs_topic()
        self._topic_filter = config.topic_filter()
        self._emit_interval_s = config.emit_checkpoints_interval()
        self._sync_interval_s = config.sync_group_offsets_interval()
        self._admin_timeout_s = config.admin_timeout_ms / 1000
        self._source_groups = GroupClients(
            config.client_config("source", "consumer", label="checkpoint-source-groups"),
            self._admin_timeout_s,
        )
        self._target_groups = GroupClients(
            config.client_config("target", "consumer", label="checkpoint-target-groups"),
            self._admin_timeout_s,
        )
        self._clients = [self._source_groups, self._target_groups]
        self._target_admin = AdminClient(
            config.client_config("target", "admin", label="checkpoint-target-admin")
        )
        self._sync_store = OffsetSyncStore(must_read_to_end=True)
        self._checkpoint_store = CheckpointStore()
        self._stopping = threading.Event()
        self._initialized = threading.Event()
        now = time.monotonic()
        self._next_emit = now + (self._emit_interval_s or 0)
        self._next_sync = now + (self._sync_interval_s or 0)
        loader = threading.Thread(target=self._load_stores, name="mirror-checkpoint-stores", daemon=True)
        self._threads = [loader]
        loader.start()
        log.info(
            "checkpointing %d consumer groups %s->%s: %s",
            len(self._groups),
            self._source,
            self._target,
            self._groups,
        )

    def stop(self) -> None:
        self._stopping.set()
        # The loader notices within its poll timeout; waiting here (briefly) lets its
        # consumers close before the task is reported stopped.
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(5)
        # After a call under way (at most admin.timeout.ms): theirs are consumers too.
        for clients in self._clients:
            clients.close()

    # -- the stores, filled in the background ----------------------------------------------

    def _load_stores(self) -> None:
        try:
            loaded = self._load_checkpoints()
            if self._stopping.is_set():
                return
            # As Kafka: with the emitted checkpoints known, the whole sync history may be
            # used from the start (monotonic checkpoints stop it from moving back); without
            # them only the newest sync of each partition counts until the end is read.
            self._sync_store = OffsetSyncStore(must_read_to_end=not loaded)
            self._initialized.set()
            read_partition(
                self._config.client_config(
                    self._offset_syncs_location, "consumer", label="offset-syncs-consumer"
                ),
                self._offset_syncs_topic,
                self._on_offset_sync,
                stopping=self._stopping,
                follow=True,
                on_caught_up=self._offset_syncs_caught_up,
            )
        except Exception:
            log.exception(
                "reading the stores of the checkpoint task %s->%s failed", self._source, self._target
            )

    def _load_checkpoints(self) -> bool:
        """The checkpoints already in the topic into the store; False if they could not be
        read to the end."""
        found: list[Checkpoint] = []

        def on_record(message: Message) -> None:
            try:
                found.append(Checkpoint.decode(message.key() or b"", message.value() or b""))
            except DataException as exc:
                log.warning(
                    "ignored invalid checkpoint record at offset %s of %s: %s",
                    message.offset(),
                    self._checkpoints_topic,
                    exc,
                )

        complete = read_partition(
            self._config.client_config("target", "consumer", label="checkpoints-target-consumer"),
            self._checkpoints_topic,
            on_record,
            stopping=self._stopping,
            deadline=time.monotonic() + self._admin_timeout_s,
        )
        if not complete and not self._stopping.is_set():
            # As Kafka: go on without them; only checkpoints made from now on count.
            log.info(
                "could not read %s on cluster %s to the end: checkpoints start afresh",
                self._checkpoints_topic,
                self._target,
            )
            found = []
        self._checkpoint_store.load(found, self._groups)
        return complete

    def _on_offset_sync(self, message: Message) -> None:
        try:
            sync = OffsetSync.decode(message.key() or b"", message.value() or b"")
        except DataException as exc:
            log.warning(
                "ignored invalid offset sync at offset %s of %s: %s",
                message.offset(),
                self._offset_syncs_topic,
                exc,
            )
            return
        with self._lock:
            self._sync_store.add(sync)

    def _offset_syncs_caught_up(self) -> None:
        with self._lock:
            self._sync_store.read_to_end_done()
        log.debug("read %s to the end", self._offset_syncs_topic)

    # -- polling -----------------------------------------------------------------------

    def poll(self) -> Sequence[SourceRecord] | None:
        due = [
            t
            for t, on in ((self._next_emit, self._emit_interval_s), (self._next_sync, self._sync_interval_s))
            if on is not None
        ]
        if not due:
            self._stopping.wait(1.0)
            return None
        if self._stopping.wait(max(0.0, min(due) - time.monotonic())):
            return None
        if not self._initialized.is_set():
            self._initialized.wait(0.2)  # still loading the stores: come back soon, without spinning
            return None
        now = time.monotonic()
        records: list[SourceRecord] = []
        if self._emit_interval_s is not None and now >= self._next_emit:
            self._next_emit = now + self._emit_interval_s
            failed: list[BaseException] = []
            for group in self._groups:
                if self._stopping.is_set():
                    return None
                records.extend(self._records_for_group(group, failed))
            if failed and len(failed) == len(self._groups):
                # Not one group could be read: the source cluster does not answer. Raised
                # (the worker retries and shows it in the task's status) until a round
                # succeeds, since poll only returns once its next round is due.
                raise RetriableException(
                    f"source cluster {self._source!r} does not answer: the offsets of "
                    f"{len(failed)} consumer group(s) could not be listed ({failed[-1]}); "
                    f"checkpoints resume when it answers (next try in {self._emit_interval_s:.0f} s)"
                )
        if self._sync_interval_s is not None and now >= self._next_sync:
            self._next_sync = now + self._sync_interval_s
            self._sync_group_offsets()
        return records or None

    def _records_for_group(self, group: str, failed: list[BaseException]) -> list[SourceRecord]:
        try:
            upstream = self._group_offsets(group)
        except (KafkaException, TimeoutError) as exc:
            log.error(
                "cannot list the offsets of consumer group %s on cluster %s: %s", group, self._source, exc
            )
            failed.append(exc)
            return []
        timestamp = int(time.time() * 1000)
        candidates = self.checkpoints_for_group(group, upstream)
        return [self._record(cp, timestamp) for cp in self._checkpoint_store.to_emit(group, candidates)]

    def _group_offsets(self, group: str) -> dict[TopicPartition, tuple[int, str]]:
        # Through a consumer of the group, not the admin client: see connect.api.kafka_groups.
        return self._source_groups.committed(group, self._topic_filter.should_replicate_topic)

    def checkpoints_for_group(
        self, group: str, upstream: Mapping[TopicPartition, tuple[int, str]]
    ) -> list[Checkpoint]:
        """Checkpoints of ``group`` for its committed ``upstream`` offsets that translate."""
        out = []
        for tp, (offset, metadata) in sorted(upstream.items()):
            if not self._topic_filter.should_replicate_topic(tp.topic):
                continue
            with self._lock:
                downstream = self._sync_store.translate_downstream(group, tp.topic, tp.partition, offset)
            if downstream is None:
                continue
            renamed = rename_topic(self._policy, tp.topic, self._source, self._target)
            out.append(Checkpoint(group, renamed, tp.partition, offset, downstream, metadata))
        return out

    def _record(self, checkpoint: Checkpoint, timestamp: int) -> SourceRecord:
        return SourceRecord(
            source_partition={
                "group": checkpoint.group,
                "topic": checkpoint.topic,
                "partition": checkpoint.partition,
            },
            source_offset={"offset": 0},
            topic=self._checkpoints_topic,
            kafka_partition=0,
            key_schema=Schema.BYTES_SCHEMA,
            key=checkpoint.key(),
            value_schema=Schema.BYTES_SCHEMA,
            value=checkpoint.value(),
            timestamp=timestamp,
        )

    def _sync_group_offsets(self) -> None:
        try:
            sync_group_offsets(
                self._target_admin,
                self._target_groups,
                self._checkpoint_store.downstream_offsets(),
                target_alias=self._target,
                timeout_s=self._admin_timeout_s,
            )
        except (KafkaException, TimeoutError) as exc:
            log.error("cannot sync group offsets to cluster %s: %s", self._target, exc)
        except Exception:
            # A side job, as Kafka's scheduler runs it: logged, checkpoints go on.
            log.exception("syncing group offsets to cluster %s failed", self._target)
