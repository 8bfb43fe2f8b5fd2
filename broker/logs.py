"""The log manager: every partition log under ``log.dirs``, topic lifecycle, and the
background work on logs (retention, compaction, scheduled flushes, checkpoints).

It also owns the single-instance guarantee: a ``.lock`` file in the data
directory held with ``flock`` for the process lifetime, as Kafka does, so a second
broker on the same ``log.dirs`` refuses to start instead of corrupting it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from broker.config import BrokerConfig, new_cluster_id
from broker.descriptors import check_room_for
from broker.metadata import MetadataStore, TopicInfo, validate_topic_name
from broker.periodic import every
from broker.storage import cleaner
from broker.storage.durable_file import replace_durably
from broker.storage.log import PartitionLog, StorageError
from broker.topic_config import TopicConfig, effective, validate_overrides

log = logging.getLogger(__name__)

LOG_START_CHECKPOINT: Final = "log-start-offset-checkpoint"
# One directory and three open files per partition: a request for more than this on one
# node is a mistake (or garbage), and honouring it would stall the broker for minutes.
MAX_PARTITIONS_PER_TOPIC: Final = 10_000
CLEANER_CHECKPOINT: Final = "cleaner-offset-checkpoint"
_FLUSH_TICK_S: Final = 1.0

TopicPartition = tuple[str, int]


class BrokerLocked(Exception):
    pass


class TopicExists(Exception):
    pass


class UnknownTopic(Exception):
    pass


class InvalidPartitions(Exception):
    pass


def _read_checkpoint(path: str) -> dict[TopicPartition, int]:
    """Kafka's checkpoint format: version line, count line, then ``topic partition offset`` lines."""
    out: dict[TopicPartition, int] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            with contextlib.suppress(ValueError):
                out[(parts[0], int(parts[1]))] = int(parts[2])
    return out


def _write_checkpoint(path: str, values: dict[TopicPartition, int]) -> None:
    body = f"0\n{len(values)}\n" + "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(values.items()))
    replace_durably(path, body.encode())


class LogManager:
    def __init__(self, config: BrokerConfig, clock_ms: Callable[[], int] | None = None) -> None:
        self.config = config
        self.data_dir = os.path.abspath(config.data_dir)
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self.logs: dict[TopicPartition, PartitionLog] = {}
        self._lock_fd = -1
        # Fetch long polls by partition: read_uncommitted ones wake on every append,
        # read_committed ones only when the last stable offset may have moved.
        self._waiters: dict[TopicPartition, set[asyncio.Future[None]]] = {}
        self._committed_waiters: dict[TopicPartition, set[asyncio.Future[None]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        # Topics whose partitions are being created or added off the event loop: not visible
        # yet (creates) or not to be grown twice at once (adds).
        self._changing: set[str] = set()
        self.cluster_id = ""
        self.metadata: MetadataStore

    # -- lifecycle -------------------------------------------------------------------

    def open(self) -> None:
        os.makedirs(self.data_dir, exist_ok=True)
        self._acquire_lock()
        self.cluster_id = self._load_meta_properties()
        self.metadata = MetadataStore(self.data_dir)
        starts = _read_checkpoint(os.path.join(self.data_dir, LOG_START_CHECKPOINT))
        dirty = _read_checkpoint(os.path.join(self.data_dir, CLEANER_CHECKPOINT))
        for info in self.metadata.topics.values():
            for p in range(info.partitions):
                plog = self._open_log(info, p, starts.get((info.name, p), 0))
                plog.first_dirty_offset = dirty.get((info.name, p), 0)
        self._remove_orphans()
        log.info(
            "loaded %d partitions of %d topics from %s",
            len(self.logs),
            len(self.metadata.topics),
            self.data_dir,
        )

    def _acquire_lock(self) -> None:
        path = os.path.join(self.data_dir, ".lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise BrokerLocked(
                    f"another broker is already using log.dirs={self.data_dir} (lock file {path} is held)"
                ) from None
            raise
        self._lock_fd = fd

    def _load_meta_properties(self) -> str:
        path = os.path.join(self.data_dir, "meta.properties")
        found: dict[str, str] = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    key, sep, value = line.strip().partition("=")
                    if sep and not key.startswith("#"):
                        found[key] = value
        cluster_id = found.get("cluster.id")
        wanted = self.config.cluster_id
        if cluster_id and wanted and wanted != cluster_id:
            raise StorageError(
                f"cluster.id {wanted} does not match the cluster.id {cluster_id} stored in {path}"
            )
        if not cluster_id:
            cluster_id = wanted or new_cluster_id()
            body = (
                f"#\n#{time.strftime('%a %b %d %H:%M:%S %Z %Y')}\n"
                f"cluster.id={cluster_id}\nnode.id={self.config.node}\nversion=1\n"
                f"directory.id={uuid.uuid4()}\n"
            )
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(body)
            os.replace(tmp, path)
        return cluster_id

    def _remove_orphans(self) -> None:
        """Partition directories no topic owns (a delete interrupted by a crash)."""
        wanted = {self._dir(t, p) for t, p in self.logs}
        for name in os.listdir(self.data_dir):
            path = os.path.join(self.data_dir, name)
            if os.path.isdir(path) and "-" in name and path not in wanted:
                _, _, part = name.rpartition("-")
                if part.isdigit() or name.endswith("-delete"):
                    log.info("removing orphaned partition directory %s", path)
                    shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        self.write_checkpoints()
        for plog in self.logs.values():
            plog.close()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    # -- topics ----------------------------------------------------------------------

    def _dir(self, topic: str, partition: int) -> str:
        return os.path.join(self.data_dir, f"{topic}-{partition}")

    def topic_config(self, info: TopicInfo) -> TopicConfig:
        return effective(self.config, info.configs)

    def _open_log(self, info: TopicInfo, partition: int, start: int = 0) -> PartitionLog:
        plog = PartitionLog(
            self._dir(info.name, partition),
            info.name,
            partition,
            self.topic_config(info),
            start,
            self._clock_ms,
        )
        self.logs[(info.name, partition)] = plog
        return plog

    def topic(self, name: str) -> TopicInfo | None:
        return self.metadata.topics.get(name)

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get((topic, partition))

    def partitions(self, topic: str) -> Iterator[PartitionLog]:
        info = self.metadata.topics.get(topic)
        if info is not None:
            for p in range(info.partitions):
                yield self.logs[(topic, p)]

    def check_new_topic(self, name: str, partitions: int, configs: dict[str, str | None]) -> dict[str, str]:
        """Validate a topic creation; returns the normalised config overrides."""
        validate_topic_name(name)
        if name in self.metadata.topics or name in self._changing:
            raise TopicExists(f"Topic '{name}' already exists.")
        if partitions < 1:
            raise InvalidPartitions(f"Number of partitions must be larger than 0 (got {partitions}).")
        if partitions > MAX_PARTITIONS_PER_TOPIC:
            raise InvalidPartitions(
                f"Number of partitions {partitions} exceeds this broker's limit of "
                f"{MAX_PARTITIONS_PER_TOPIC} per topic."
            )
        overrides = validate_overrides(configs)
        self._check_room(partitions)
        return overrides

    def _check_room(self, partitions: int) -> None:
        problem = check_room_for(partitions, len(self.logs))
        if problem is not None:
            raise InvalidPartitions(problem)

    def create_topic(
        self, name: str, partitions: int, configs: dict[str, str | None] | None = None, internal: bool = False
    ) -> TopicInfo:
        """Create a topic here and now (auto-creation and internal topics: a few partitions)."""
        overrides = self.check_new_topic(name, partitions, configs or {})
        info = TopicInfo(name, uuid.uuid4(), partitions, overrides, internal)
        return self._publish(info, self._open_logs(info, range(partitions)))

    async def create_topic_off_loop(
        self, name: str, partitions: int, configs: dict[str, str | None] | None = None
    ) -> TopicInfo:
        """Create a topic, opening its partition logs on a worker thread: thousands of
        partitions take seconds of file system work, which must not stall every client.
        The name is reserved meanwhile, and the topic appears only once all its logs exist."""
        overrides = self.check_new_topic(name, partitions, configs or {})
        info = TopicInfo(name, uuid.uuid4(), partitions, overrides)
        self._changing.add(name)
        try:
            logs = await asyncio.to_thread(self._open_logs, info, range(partitions))
        finally:
            self._changing.discard(name)
        return self._publish(info, logs)

    def _open_logs(self, info: TopicInfo, partitions: range) -> list[PartitionLog]:
        """New partition logs of ``info``, registered nowhere yet (safe on any thread); on a
        storage error, whatever was made is removed again."""
        config = self.topic_config(info)
        made: list[PartitionLog] = []
        try:
            for p in partitions:
                made.append(PartitionLog(self._dir(info.name, p), info.name, p, config, 0, self._clock_ms))
        except OSError as exc:
            self._remove_logs(info.name, made, partitions)
            raise StorageError(f"cannot create partitions of topic {info.name}: {exc.strerror}") from exc
        return made

    def _remove_logs(self, name: str, made: list[PartitionLog], partitions: range) -> None:
        for plog in made:
            plog.close_for_delete()
        for p in partitions:
            shutil.rmtree(self._dir(name, p), ignore_errors=True)

    def _publish(self, info: TopicInfo, logs: list[PartitionLog]) -> TopicInfo:
        for plog in logs:
            self.logs[(info.name, plog.partition)] = plog
        self.metadata.topics[info.name] = info
        try:
            self.metadata.save()
        except OSError as exc:
            for plog in logs:
                self.logs.pop((info.name, plog.partition), None)
            self.metadata.topics.pop(info.name, None)
            self._remove_logs(info.name, logs, range(info.partitions))
            raise StorageError(f"cannot create topic {info.name}: {exc.strerror}") from exc
        log.info(
            "created topic %s with %d partitions%s",
            info.name,
            info.partitions,
            f" and configs {info.configs}" if info.configs else "",
        )
        return info

    async def delete_topic(self, name: str) -> None:
        info = self.metadata.topics.get(name)
        if info is None:
            raise UnknownTopic(name)
        del self.metadata.topics[name]
        self.metadata.save()
        for p in range(info.partitions):
            plog = self.logs.pop((name, p))
            async with plog.cleaning:
                plog.close_for_delete()
            self._wake((name, p))
            path = self._dir(name, p)
            # Rename first so a crash mid-delete leaves an obvious orphan, never a live-looking log.
            doomed = f"{path}.{uuid.uuid4().hex}-delete"
            with contextlib.suppress(OSError):
                os.rename(path, doomed)
                path = doomed
            shutil.rmtree(path, ignore_errors=True)
        log.info("deleted topic %s", name)

    def check_add_partitions(self, name: str, count: int) -> TopicInfo:
        info = self.metadata.topics.get(name)
        if info is None:
            raise UnknownTopic(name)
        if name in self._changing:
            raise InvalidPartitions(f"Partitions are being added to topic {name} already.")
        if count > MAX_PARTITIONS_PER_TOPIC:
            raise InvalidPartitions(
                f"Number of partitions {count} exceeds this broker's limit of "
                f"{MAX_PARTITIONS_PER_TOPIC} per topic."
            )
        if count <= info.partitions:
            raise InvalidPartitions(
                f"Topic currently has {info.partitions} partitions, which is higher than or equal to "
                f"the requested {count}."
            )
        self._check_room(count - info.partitions)
        return info

    def add_partitions(self, name: str, count: int, validate_only: bool = False) -> None:
        info = self.check_add_partitions(name, count)
        if not validate_only:
            self._grow(info, self._open_logs(info, range(info.partitions, count)))

    async def add_partitions_off_loop(self, name: str, count: int) -> None:
        """``add_partitions`` with the new logs opened on a worker thread (see create_topic_off_loop)."""
        info = self.check_add_partitions(name, count)
        new = range(info.partitions, count)
        self._changing.add(name)
        try:
            logs = await asyncio.to_thread(self._open_logs, info, new)
        finally:
            self._changing.discard(name)
        if self.metadata.topics.get(name) is not info:
            # Deleted meanwhile (not re-created: the name is reserved until now).
            self._remove_logs(name, logs, new)
            raise UnknownTopic(name)
        self._grow(info, logs)

    def _grow(self, info: TopicInfo, logs: list[PartitionLog]) -> None:
        for plog in logs:
            self.logs[(info.name, plog.partition)] = plog
        info.partitions += len(logs)
        self.metadata.save()

    def set_topic_configs(self, name: str, overrides: dict[str, str]) -> None:
        info = self.metadata.topics.get(name)
        if info is None:
            raise UnknownTopic(name)
        info.configs = dict(overrides)
        self.metadata.save()
        cfg = self.topic_config(info)
        for plog in self.partitions(name):
            plog.config = cfg

    # -- waiting for data (Fetch long-poll) -------------------------------------------

    def notify(self, tp: TopicPartition, stable_moved: bool = True) -> None:
        """``tp`` got an append. ``stable_moved`` False: its last stable offset stayed where
        it was (a transactional batch behind an open transaction), so read_committed long
        polls, which could not read any of it, sleep on until a marker or a plain append
        moves it (``benchmarks/eos_source.py``: every transaction's data and offsets
        appends woke the reader of each partition for nothing)."""
        self._wake_set(self._waiters, tp)
        if stable_moved:
            self._wake_set(self._committed_waiters, tp)

    def _wake(self, tp: TopicPartition) -> None:
        self._wake_set(self._waiters, tp)
        self._wake_set(self._committed_waiters, tp)

    @staticmethod
    def _wake_set(by_tp: dict[TopicPartition, set[asyncio.Future[None]]], tp: TopicPartition) -> None:
        waiters = by_tp.pop(tp, None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    async def wait_for_data(
        self, tps: Sequence[TopicPartition], timeout_s: float, committed: bool = False
    ) -> None:
        """Return when any of ``tps`` gets an append (``committed``: an append or marker
        that may move its last stable offset), or after ``timeout_s``.

        With no partition it returns at once: nothing could wake it, so a caller that
        loops until data arrives must not call it for none (it would spin).
        """
        if timeout_s <= 0 or not tps:
            return
        by_tp = self._committed_waiters if committed else self._waiters
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        for tp in tps:
            by_tp.setdefault(tp, set()).add(fut)
        try:
            await asyncio.wait_for(fut, timeout_s)
        except TimeoutError:
            pass
        finally:
            for tp in tps:
                ws = by_tp.get(tp)
                if ws is not None:
                    ws.discard(fut)
                    if not ws:
                        del by_tp[tp]

    # -- background work --------------------------------------------------------------

    def start_background(self) -> None:
        cfg = self.config
        self._tasks = [
            every(cfg.log_retention_check_interval_ms / 1000, self.run_retention, "log-retention"),
            every(_FLUSH_TICK_S, self._flush_tick, "log-flush"),
        ]
        if cfg.log_cleaner_enable:
            self._tasks.append(
                every(max(cfg.log_cleaner_backoff_ms, 10) / 1000, self.run_cleaner, "log-cleaner")
            )

    async def run_retention(self) -> int:
        now = self._clock_ms()
        deleted = 0
        for plog in list(self.logs.values()):
            if not plog.config.delete or plog.closed:
                continue
            async with plog.cleaning:
                if not plog.closed:
                    deleted += plog.delete_expired(now)
        expiry = now - self.config.producer_id_expiration_ms
        for plog in self.logs.values():
            plog.producers.expire(expiry)
        if deleted:
            log.info("retention deleted %d segments", deleted)
            self.write_checkpoints()
        return deleted

    async def run_cleaner(self) -> int:
        cleaned = 0
        for plog in list(self.logs.values()):
            now = self._clock_ms()
            if not cleaner.needs_cleaning(plog, now):
                continue
            async with plog.cleaning:
                if plog.closed:
                    continue
                segs = cleaner.cleanable_segments(plog, now)
                if not segs:
                    continue
                result = await asyncio.to_thread(cleaner.prepare, plog, segs, now)
                if plog.closed:
                    continue
                cleaner.install(plog, result)
                cleaned += 1
        if cleaned:
            self.write_checkpoints()
        return cleaned

    def _flush_tick(self) -> None:
        now = self._clock_ms()
        for plog in self.logs.values():
            plog.maybe_flush(now)

    def write_checkpoints(self) -> None:
        try:
            _write_checkpoint(
                os.path.join(self.data_dir, LOG_START_CHECKPOINT),
                {tp: pl.log_start_offset for tp, pl in self.logs.items() if pl.log_start_offset},
            )
            _write_checkpoint(
                os.path.join(self.data_dir, CLEANER_CHECKPOINT),
                {tp: pl.first_dirty_offset for tp, pl in self.logs.items() if pl.first_dirty_offset},
            )
        except OSError as exc:
            log.warning("cannot write checkpoints in %s: %s", self.data_dir, exc.strerror)
