"""MirrorCheckpointConnector: which consumer groups to checkpoint, spread over tasks.

As Kafka's ``MirrorCheckpointConnector``: on start, in the background, it creates the
checkpoints topic ``<source>.checkpoints.internal`` on the target (one partition, compacted,
``checkpoints.topic.replication.factor``; a factor the target cannot hold fails the
connector with a message naming the topic, the cluster and the key), then lists the
source's consumer groups: those the group filter (``groups``/``groups.exclude``) accepts and
that have committed offsets for at least one topic the topic filter accepts. Every
``refresh.groups.interval.seconds`` (``refresh.groups.enabled``) it lists them again and asks
for new task configs when the set changed. Groups go to at most ``tasks.max`` tasks, in
contiguous runs, as ``task.assigned.groups``.

Until the first listing is done there are no tasks (Kafka raises a retriable error from
``taskConfigs`` instead; here that would fail the connector), and the connector asks for
task configs again once it knows the groups.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, ClassVar

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from connect.api import ConnectException, SourceConnector
from connect.api.config import ConfigModel
from connect.api.kafka_groups import GroupClients
from connect.api.retry import backoff_seconds
from connect.api.task import Task
from connectors.mirror.checkpoint_task import (
    TASK_GROUPS_KEY,
    VERSION,
    MirrorCheckpointTask,
)
from connectors.mirror.config import MirrorCheckpointConfig
from connectors.mirror.internal_topics import create_compacted_topic_until_done
from connectors.mirror.topics import ClusterAdmin

log = logging.getLogger(__name__)

REPLICATION_FACTOR_KEY = "checkpoints.topic.replication.factor"


def split_groups(groups: list[str], max_tasks: int) -> list[list[str]]:
    """``groups`` in at most ``max_tasks`` contiguous runs whose sizes differ by at most one
    (Kafka's ``ConnectorUtils.groupPartitions``)."""
    count = min(max_tasks, len(groups))
    if count <= 0:
        return []
    size, extra = divmod(len(groups), count)
    out, at = [], 0
    for i in range(count):
        n = size + (1 if i < extra else 0)
        out.append(groups[at : at + n])
        at += n
    return out


class MirrorCheckpointConnector(SourceConnector):
    Config: ClassVar[type[ConfigModel]] = MirrorCheckpointConfig
    aliases = ("org.apache.kafka.connect.mirror.MirrorCheckpointConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._config: MirrorCheckpointConfig | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._known_groups: set[str] | None = None
        self._lock = threading.Lock()

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        self._config = config = MirrorCheckpointConfig.parse(props)
        self._known_groups = None
        self._stopping = threading.Event()
        if not config.enabled:
            return
        self._source = config.source_cluster_alias
        self._target = config.target_cluster_alias
        self._timeout_s = config.admin_timeout_ms / 1000
        self._group_filter = config.group_filter()
        self._topic_filter = config.topic_filter()
        self._thread = threading.Thread(target=self._run, name="mirror-checkpoint-connector", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None

    def task_class(self) -> type[Task]:
        return MirrorCheckpointTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        assert config is not None
        with self._lock:
            known = None if self._known_groups is None else sorted(self._known_groups)
        if not config.enabled or not known or config.emit_checkpoints_interval() is None:
            return []
        return [
            {**self._props, TASK_GROUPS_KEY: ",".join(run), "task.index": str(i)}
            for i, run in enumerate(split_groups(known, max_tasks))
        ]

    # -- the background work -----------------------------------------------------------

    def _run(self) -> None:
        config = self._config
        assert config is not None
        try:
            target_admin = ClusterAdmin(
                config.client_config("target", "admin", label="checkpoint-target-admin"),
                self._target,
                "target",
                config.admin_timeout_ms,
            )
            created = create_compacted_topic_until_done(
                target_admin,
                config.checkpoints_topic(),
                config.checkpoints_topic_replication_factor,
                replication_factor_key=REPLICATION_FACTOR_KEY,
                stopping=self._stopping,
            )
        except ConnectException as exc:
            self.context.raise_error(exc)
            return
        if not created:
            return
        try:
            source_admin = AdminClient(
                config.client_config("source", "admin", label="checkpoint-source-admin")
            )
            source_groups = GroupClients(
                config.client_config("source", "consumer", label="checkpoint-source-groups"),
                self._timeout_s,
            )
        except ConnectException as exc:
            self.context.raise_error(exc)
            return
        try:
            self._refresh_groups(config, source_admin, source_groups)
        finally:
            source_groups.close()

    def _refresh_groups(
        self, config: MirrorCheckpointConfig, source_admin: AdminClient, source_groups: GroupClients
    ) -> None:
        refresh = config.refresh_groups_interval()
        attempt = 0
        while not self._stopping.is_set():
            try:
                groups = self.find_consumer_groups(source_admin, source_groups)
            except (KafkaException, TimeoutError) as exc:
                wait = min(backoff_seconds(attempt, 500), 30.0)
                attempt += 1
                log.warning(
                    "cannot list consumer groups on cluster %s: %s; retrying in %.1f s",
                    self._source,
                    exc,
                    wait,
                )
                self._stopping.wait(wait)
                continue
            attempt = 0
            self._groups_found(groups)
            if refresh is None:
                return
            self._stopping.wait(refresh)

    def _groups_found(self, groups: set[str]) -> None:
        with self._lock:
            previous = self._known_groups
            self._known_groups = groups
        if previous is None:
            log.info("started %s->%s with %d consumer groups", self._source, self._target, len(groups))
        elif previous != groups:
            log.info(
                "found %d consumer groups for %s->%s: %d new, %d removed",
                len(groups),
                self._source,
                self._target,
                len(groups - previous),
                len(previous - groups),
            )
        else:
            return
        self.context.request_task_reconfiguration()

    def find_consumer_groups(self, admin: AdminClient, groups: GroupClients) -> set[str]:
        """The source's groups to checkpoint: accepted by the group filter, with offsets for
        at least one topic the topic filter accepts (read through a consumer of each group,
        not the admin client: see connect.api.kafka_groups)."""
        listed: Any = admin.list_consumer_groups(request_timeout=self._timeout_s).result(self._timeout_s)
        candidates = sorted(
            g.group_id for g in listed.valid if self._group_filter.should_replicate_group(g.group_id)
        )
        found = set()
        for group in candidates:
            try:
                if groups.committed(group, self._topic_filter.should_replicate_topic):
                    found.add(group)
            finally:
                groups.forget([group])  # a consumer per group of the whole cluster is too many to keep
        return found
