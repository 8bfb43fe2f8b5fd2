"""MirrorHeartbeatConnector: one task writing a heartbeat into the target's ``heartbeats`` topic.

As Kafka's ``MirrorHeartbeatConnector``/``MirrorHeartbeatTask``: the connector creates the
heartbeats topic on the target (one partition, compacted,
``heartbeats.topic.replication.factor``) and runs a single task, none when
``emit.heartbeats.enabled=false``. Every ``emit.heartbeats.interval.seconds`` the task emits a
``Heartbeat(source alias, target alias, now)`` record to partition 0. Heartbeats replicated
onward (``A.heartbeats`` on C) are how ``client.upstream_clusters`` and
``client.replication_hops`` see the replication graph.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import ClassVar

from connect.api import ConnectException, Schema, SourceConnector, SourceRecord, SourceTask
from connect.api.config import ConfigModel
from connect.api.task import Task
from connectors.mirror.config import MirrorHeartbeatConfig
from connectors.mirror.formats import Heartbeat
from connectors.mirror.internal_topics import create_compacted_topic_until_done
from connectors.mirror.topics import ClusterAdmin

log = logging.getLogger(__name__)

VERSION = "1.0"
REPLICATION_FACTOR_KEY = "heartbeats.topic.replication.factor"


class MirrorHeartbeatConnector(SourceConnector):
    Config: ClassVar[type[ConfigModel]] = MirrorHeartbeatConfig
    aliases = ("org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._config: MirrorHeartbeatConfig | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        self._config = MirrorHeartbeatConfig.parse(props)
        self._stopping = threading.Event()
        # Creating the topic waits on the target; off the worker's executor, as Kafka's
        # Scheduler does it, so an unreachable target cannot hold up start/stop.
        self._thread = threading.Thread(target=self._create_topic, name="mirror-heartbeat-topic", daemon=True)
        self._thread.start()

    def _create_topic(self) -> None:
        config = self._config
        assert config is not None
        try:
            admin = ClusterAdmin(
                config.client_config("target", "admin", label="heartbeats-target-admin"),
                config.target_cluster_alias,
                "target",
                config.admin_timeout_ms,
            )
            create_compacted_topic_until_done(
                admin,
                config.heartbeats_topic(),
                config.heartbeats_topic_replication_factor,
                replication_factor_key=REPLICATION_FACTOR_KEY,
                stopping=self._stopping,
            )
        except ConnectException as exc:
            self.context.raise_error(exc)

    def task_class(self) -> type[Task]:
        return MirrorHeartbeatTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        assert self._config is not None
        if self._config.emit_heartbeats_interval() is None:
            return []
        return [dict(self._props)]  # one task is all heartbeats need

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None


class MirrorHeartbeatTask(SourceTask):
    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._interval_s = 1.0
        self._topic = "heartbeats"
        self._source = "source"
        self._target = "target"

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = MirrorHeartbeatConfig.parse(props)
        self._stopped = threading.Event()
        self._source = config.source_cluster_alias
        self._target = config.target_cluster_alias
        self._topic = config.heartbeats_topic()
        interval = config.emit_heartbeats_interval()
        if interval is None:
            raise ConnectException("MirrorHeartbeatTask started with emit.heartbeats.enabled=false")
        self._interval_s = interval

    def poll(self) -> Sequence[SourceRecord] | None:
        if self._stopped.wait(self._interval_s):
            return None
        now = int(time.time() * 1000)
        beat = Heartbeat(self._source, self._target, now)
        return [
            SourceRecord(
                source_partition=beat.source_partition(),
                source_offset={"offset": 0},
                topic=self._topic,
                kafka_partition=0,
                key_schema=Schema.BYTES_SCHEMA,
                key=beat.key(),
                value_schema=Schema.BYTES_SCHEMA,
                value=beat.value(),
                timestamp=now,
            )
        ]

    def stop(self) -> None:
        self._stopped.set()
