"""MirrorSourceConnector: chooses the source topics to replicate, creates their remote
topics on the target, keeps their partitions and configs in step, and spreads the
partitions over its tasks (Kafka's ``org.apache.kafka.connect.mirror.MirrorSourceConnector``).

At start it creates the offset-syncs topic (``mm2-offset-syncs.<alias>.internal``, one
partition, compacted, on the cluster ``offset-syncs.topic.location`` names), lists the
topics of both clusters and creates what the target lacks. A background thread then
refreshes every ``refresh.topics.interval.seconds`` (new topics and partitions on the
source: created on the target, tasks reconfigured), syncs topic configs every
``sync.topic.configs.interval.seconds`` (IncrementalAlterConfigs only: the 3.x
``use.incremental.alter.configs`` fallback to AlterConfigs is not there) and topic ACLs
every ``sync.topic.acls.interval.seconds``.

Errors, as the issue asks and unlike Kafka (which logs and goes on):

- A cluster that does not answer: logged, retried with backoff (sooner than the refresh
  interval); the connector stays RUNNING, tasks keep replicating what they have.
- A cluster that refuses (a replication factor above its broker count above all): the
  connector goes FAILED with a message naming the topic, the cluster, the reason and the
  key to set. At start this is the exception ``start`` raises; later, ``raise_error``.
  Either way it is one status, not a restart loop.

Tasks are only given partitions whose remote partition exists on the target, so a task
never writes to a topic that was not created with the source's partition count.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from connect.api import (
    ConfigIssue,
    ConnectException,
    ExactlyOnceSupport,
    SourceConnector,
    TopicPartition,
)
from connect.api.config import ConfigModel
from connect.api.retry import backoff_seconds
from connect.api.task import Task
from connectors.mirror.config import MirrorSourceConfig, client_config, offset_syncs_cluster
from connectors.mirror.policy import ReplicationPolicy
from connectors.mirror.source_task import VERSION, MirrorSourceTask
from connectors.mirror.topic_plan import (
    TASK_INDEX_KEY,
    TASK_PARTITIONS_KEY,
    PartitionPlan,
    acls_for_target,
    config_for_new_topic,
    config_ops,
    encode_partitions,
    expand,
    plan_partitions,
    replicable_partitions,
    round_robin,
    should_replicate_topic,
    target_topics_of,
)
from connectors.mirror.topics import ClusterAdmin, ClusterUnavailable, SecurityDisabled

log = logging.getLogger(__name__)

#: Retries of a job whose cluster did not answer: from 1 s, doubling, capped by its interval.
_RETRY_BASE_MS: Final = 1000
_RETRY_MAX_ATTEMPT: Final = 6
_RETRY_CAP_S: Final = 60.0  # for jobs without an interval
_NEVER: Final = math.inf


@dataclass(eq=False)
class _Job:
    what: str
    run: Callable[[], None]
    interval: float | None  # None: until it succeeds once
    due: float
    failures: int = 0


class MirrorSourceConnector(SourceConnector):
    """Replicate topics, their partitions and configs from the source to the target."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.mirror.MirrorSourceConnector",)
    Config: ClassVar[type[ConfigModel]] = MirrorSourceConfig

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the known partitions: the refresh thread vs task_configs
        self._source_counts: dict[str, int] = {}
        self._target_counts: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._enabled = False
        self._reported: str | None = None  # the refusal last raised through raise_error

    def version(self) -> str:
        return VERSION

    def task_class(self) -> type[Task]:
        return MirrorSourceTask

    # -- lifecycle ----------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        config = MirrorSourceConfig.parse(props)
        self._props = dict(props)
        self._enabled = config.enabled
        if not self._enabled:
            return
        self._source_alias = config.source_cluster_alias
        self._target_alias = config.target_cluster_alias
        self._policy: ReplicationPolicy = config.replication_policy()
        self._topic_filter = config.topic_filter()
        self._property_filter = config.config_property_filter()
        self._heartbeats = config.heartbeats_replication_enabled
        self._replication_factor = config.replication_factor
        self._checkpoints_topic = config.checkpoints_topic()
        timeout_ms = config.admin_timeout_ms
        self._source = ClusterAdmin(
            config.client_config("source", "admin", "replication-source-admin"),
            self._source_alias,
            "source",
            timeout_ms,
        )
        self._target = ClusterAdmin(
            config.client_config("target", "admin", "replication-target-admin"),
            self._target_alias,
            "target",
            timeout_ms,
        )

        self._emit_offset_syncs = config.emit_offset_syncs_enabled
        location = offset_syncs_cluster(config)
        self._offset_syncs_admin = self._source if location == "source" else self._target
        self._offset_syncs_topic = config.offset_syncs_topic()
        self._offset_syncs_rf = config.offset_syncs_topic_replication_factor
        self._offset_syncs_ready = not self._emit_offset_syncs

        self._refresh_enabled = config.refresh_topics_enabled
        self._refresh_s = float(config.refresh_topics_interval_seconds)
        self._sync_configs = config.sync_topic_configs_enabled
        self._sync_configs_s = float(config.sync_topic_configs_interval_seconds)
        self._sync_acls = config.sync_topic_acls_enabled
        self._sync_acls_s = float(config.sync_topic_acls_interval_seconds)
        self._no_authorizer = False  # logged once, as Kafka does

        self._stop = threading.Event()
        self._reported = None
        # The first round at once, as Kafka does: a refusal fails start() (FAILED with the
        # reason); a cluster that does not answer is retried by the thread.
        loaded = False
        try:
            self._create_offset_syncs_topic()
            self._refresh(initial=True)
            loaded = True
        except ClusterUnavailable as exc:
            log.warning("%s: %s; retrying in the background", self._flow, exc)
        self._thread = threading.Thread(
            target=self._run, args=(loaded,), name=f"mirror-source-{self._flow}", daemon=True
        )
        self._thread.start()
        with self._lock:
            n = len(self._assignable())
        log.info("%s: started with %d topic-partitions to replicate", self._flow, n)

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            # It waits on _stop, or is inside an admin call bounded by admin.timeout.ms.
            thread.join()
        # AdminClient has no close(): dropping the last reference ends its threads, which
        # would otherwise keep reconnecting to clusters that may be gone.
        for name in ("_source", "_target", "_offset_syncs_admin"):
            vars(self).pop(name, None)

    @property
    def _flow(self) -> str:
        return f"{self._source_alias}->{self._target_alias}"

    # -- tasks --------------------------------------------------------------------------

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if not self._enabled:
            return []
        with self._lock:
            partitions = self._assignable()
        if not partitions:
            return []
        return [
            {**self._props, TASK_PARTITIONS_KEY: encode_partitions(assigned), TASK_INDEX_KEY: str(i)}
            for i, assigned in enumerate(round_robin(partitions, max_tasks))
        ]

    def _assignable(self) -> list[TopicPartition]:
        return replicable_partitions(expand(self._source_counts), self._target_counts, self._remote)

    def _should_replicate(self, topic: str) -> bool:
        return should_replicate_topic(
            topic, self._topic_filter, self._policy, self._target_alias, self._heartbeats
        )

    def _remote(self, topic: str) -> str:
        return self._policy.format_remote_topic(self._source_alias, topic)

    # -- the refresh thread -------------------------------------------------------------

    def _jobs(self, loaded: bool) -> list[_Job]:
        """What the thread does, each on its own schedule (Kafka's Scheduler): the first
        refresh after an interval (start did one), or at once if start could not; configs
        and ACLs at once, then every interval."""
        now = time.monotonic()
        jobs = []
        if not self._offset_syncs_ready:
            jobs.append(_Job("create the offset-syncs topic", self._create_offset_syncs_topic, None, now))
        if self._refresh_enabled:
            due = now if not loaded else now + self._refresh_s
            jobs.append(_Job("refresh topics", self._refresh, self._refresh_s, due))
        elif not loaded:
            jobs.append(_Job("load topics", self._refresh, None, now))
        if self._sync_configs:
            jobs.append(_Job("sync topic configs", self._sync_topic_configs, self._sync_configs_s, now))
        if self._sync_acls:
            jobs.append(_Job("sync topic ACLs", self._sync_topic_acls, self._sync_acls_s, now))
        return jobs

    def _run(self, loaded: bool) -> None:
        jobs = self._jobs(loaded)
        while jobs and not self._stop.is_set():
            for job in jobs:
                if job.due <= time.monotonic() and not self._stop.is_set():
                    self._run_job(job)
            jobs = [j for j in jobs if j.due != _NEVER]
            if jobs:
                self._stop.wait(max(0.0, min(j.due for j in jobs) - time.monotonic()))

    def _run_job(self, job: _Job) -> None:
        # Errors never end the thread: a cluster that does not answer is retried with
        # backoff (sooner than the interval), a refusal is reported and tried again later.
        retry_after = max(job.interval or _RETRY_CAP_S, 1.0)
        try:
            job.run()
        except ClusterUnavailable as exc:
            wait = min(backoff_seconds(min(job.failures, _RETRY_MAX_ATTEMPT), _RETRY_BASE_MS), retry_after)
            job.failures += 1
            job.due = time.monotonic() + wait
            log.warning("%s: %s; retrying in %.1f s", self._flow, exc, wait)
            return
        except ConnectException as exc:
            self._refused(exc)
            job.due = time.monotonic() + retry_after
            return
        except Exception as exc:  # a bug: report it rather than die silently
            log.exception("%s: cannot %s", self._flow, job.what)
            self._refused(ConnectException(f"{self._flow}: cannot {job.what}: {exc!r}"))
            job.due = time.monotonic() + retry_after
            return
        job.failures = 0
        job.due = _NEVER if job.interval is None else time.monotonic() + job.interval

    def _refused(self, exc: ConnectException) -> None:
        """A refusal retrying will not fix: the connector goes FAILED saying why (once per
        distinct message, so a refresh that keeps failing does not flood the status)."""
        message = str(exc)
        log.error("%s: %s", self._flow, message)
        if message != self._reported:
            self._reported = message
            self.context.raise_error(exc)

    def _create_offset_syncs_topic(self) -> None:
        if not self._offset_syncs_ready:
            self._offset_syncs_admin.create_compacted_topic(
                self._offset_syncs_topic, self._offset_syncs_rf, "offset-syncs.topic.replication.factor"
            )
        self._offset_syncs_ready = True

    def _refresh(self, initial: bool = False) -> None:
        """Kafka's refreshTopicPartitions: find the source's topics, create what the target
        lacks, and ask for new task configs when the assignable partitions changed."""
        source = {t: n for t, n in self._source.partition_counts().items() if self._should_replicate(t)}
        target = self._target_counts_now()
        plan = plan_partitions(source, target, self._remote)
        refused: ConnectException | None = None
        if plan:
            log.info(
                "%s: %d new topics and %d grown topics to create on %s",
                self._flow,
                len(plan.new_topics),
                len(plan.grown),
                self._target_alias,
            )
            try:
                self._create(plan)
            except ClusterUnavailable:
                raise
            except ConnectException as exc:
                # Others may have been created: assign those, then report this one.
                refused = exc
            target = self._target_counts_now()
        with self._lock:
            before = self._assignable()
            self._source_counts, self._target_counts = source, target
            after = self._assignable()
        if not initial and before != after:
            log.info(
                "%s: %d topic-partitions to replicate (were %d); reconfiguring tasks",
                self._flow,
                len(after),
                len(before),
            )
            self.context.request_task_reconfiguration()
        if refused is not None:
            raise refused

    def _create(self, plan: PartitionPlan) -> None:
        sources = [src for src, _ in plan.new_topics.values()]
        configs = self._source.topic_configs(sources) if sources else {}
        self._target.create_topics(
            {
                remote: (n, config_for_new_topic(configs.get(src, ()), self._property_filter))
                for remote, (src, n) in plan.new_topics.items()
            },
            self._replication_factor,
            "replication.factor",
        )
        self._target.create_partitions(plan.grown)

    def _target_counts_now(self) -> dict[str, int]:
        counts = self._target.partition_counts()
        mine = target_topics_of(counts, self._policy, self._source_alias, self._checkpoints_topic)
        return {t: counts[t] for t in mine}

    def _sync_topic_configs(self) -> None:
        """Kafka's syncTopicConfigs: the replicated topics' source configs, filtered, applied
        to their remote topics with IncrementalAlterConfigs."""
        with self._lock:
            replicated = [t for t in self._source_counts if self._remote(t) in self._target_counts]
        if not replicated:
            return
        source_configs = self._source.topic_configs(replicated)
        ops = {
            self._remote(topic): config_ops(entries, self._property_filter)
            for topic, entries in source_configs.items()
        }
        self._target.alter_topic_configs(ops)

    def _sync_topic_acls(self) -> None:
        """Kafka's syncTopicAcls: the replicated topics' literal ACLs, renamed, created on
        the target (ALLOW WRITE left out, ALLOW ALL as READ). A source without an
        authorizer has none: said once, then skipped quietly."""
        try:
            acls = self._source.topic_acls()
        except SecurityDisabled:
            if not self._no_authorizer:
                self._no_authorizer = True
                log.info(
                    "%s: cluster '%s' has no ACL authorizer, so no topic ACLs are synced; consider "
                    "setting sync.topic.acls.enabled=false",
                    self._flow,
                    self._source_alias,
                )
            return
        self._target.create_acls(acls_for_target(acls, self._should_replicate, self._remote))

    # -- what Kafka's MirrorSourceConnector also answers --------------------------------

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """SUPPORTED only when the source consumer reads committed records, as Kafka says:
        otherwise aborted transactions on the source would be copied."""
        try:
            isolation = client_config(props, "source", "consumer").get("isolation.level")
        except ConnectException:
            return ExactlyOnceSupport.UNSUPPORTED
        return (
            ExactlyOnceSupport.SUPPORTED if isolation == "read_committed" else ExactlyOnceSupport.UNSUPPORTED
        )

    def validate(self, props: Mapping[str, str]) -> list[ConfigIssue]:
        issues = super().validate(props)
        offset_sync_keys = [
            k for k in props if k.startswith(("offset-syncs.producer.", "offset-syncs.topic."))
        ]
        if (
            str(props.get("emit.offset-syncs.enabled", "true")).strip().lower() == "false"
            and offset_sync_keys
        ):
            issues.append(
                ConfigIssue(
                    "emit.offset-syncs.enabled",
                    "MirrorSourceConnector can't setup offset-syncs feature while emit.offset-syncs.enabled "
                    f"set to false (offset-syncs keys given: {', '.join(sorted(offset_sync_keys))})",
                )
            )
        return issues

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Mapping[tuple[tuple[str, Any], ...], Mapping[str, Any] | None],
    ) -> bool:
        """Offsets are the worker's only (the source consumer commits nothing), so checking
        their shape is all there is to do (Kafka's MirrorUtils validations)."""
        for key, offset in offsets.items():
            if offset is None:
                continue  # tombstones clean anything up
            partition = dict(key)
            for name in ("cluster", "topic"):
                if not isinstance(partition.get(name), str):
                    raise ConnectException(
                        f"Source partition {partition} has an invalid value {partition.get(name)!r} for the "
                        f"'{name}' key, which must be a string"
                    )
            number = partition.get("partition")
            if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= 2**31 - 1:
                raise ConnectException(
                    f"Source partition {partition} has an invalid value {number!r} for the 'partition' key, "
                    "which must be a non-negative integer"
                )
            value = offset.get("offset")
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConnectException(
                    f"Source offset {dict(offset)} for source partition {partition} has an invalid value "
                    f"{value!r} for the 'offset' key, which must be a non-negative integer"
                )
        return True
