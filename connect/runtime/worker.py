"""The worker: runs connectors and tasks on this process's threads.

A herder decides what should run (from configs, target states and, in distributed
mode, the group assignment); the worker makes it so. Its methods block (they wait
for connector calls and task threads) and are called from the herder's executor,
never on the event loop. Config provider placeholders are resolved here, at the
moment a connector or task starts; stored configs keep them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from connect.api.config_provider import ConfigProvider
from connect.api.connector import Connector, SinkConnector
from connect.api.errors import ConnectException
from connect.api.task import SinkTask, SourceTask, Task
from connect.runtime import clients
from connect.runtime.config import (
    ConnectorRuntimeConfig,
    DistributedConfig,
    SinkRuntimeConfig,
    SourceRuntimeConfig,
    WorkerConfig,
    runtime_config_model,
)
from connect.runtime.config_providers import resolve
from connect.runtime.dead_letter_queue import DeadLetterQueueReporter
from connect.runtime.errors import ErrorReporter, ErrorsConfig, LogReporter, RetryWithToleranceOperator
from connect.runtime.exactly_once import ExactlyOnceSetup, fence_producers, task_transactional_id
from connect.runtime.metrics import MetricsSampler, StartupCounts
from connect.runtime.plugin_config import plugin_key_defs
from connect.runtime.plugins import PluginNotFound, Plugins, PluginType, import_plugin_module
from connect.runtime.secrets import SECRETS, secret_values
from connect.runtime.sink_task import WorkerSinkTask
from connect.runtime.source_task import WorkerSourceTask
from connect.runtime.status import ConnectorTaskId, State, Status, StatusListener, TargetState, trace_of
from connect.runtime.switch_interval import use_worker_switch_interval
from connect.runtime.topic_creation import TopicCreation
from connect.runtime.transformation_chain import TransformationChain, TransformationStage
from connect.runtime.worker_connector import WorkerConnector
from connect.runtime.worker_task import WorkerTask
from connect.storage.offsets import (
    ConnectorOffsetReader,
    LayeredOffsetBackingStore,
    OffsetBackingStore,
    OffsetStorageWriter,
)

log = logging.getLogger(__name__)

TASK_CLASS_CONFIG = "task.class"
_ignored_topics: set[str] = set()
CONNECTOR_CALL_TIMEOUT_S = 90.0


class Worker:
    def __init__(
        self,
        worker_id: str,
        config: WorkerConfig,
        plugins: Plugins,
        offsets: OffsetBackingStore,
        status: StatusListener,
    ) -> None:
        self.worker_id = worker_id
        self.config = config
        self.plugins = plugins
        self.offsets = offsets
        self.status = status
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[ConnectorTaskId, WorkerTask] = {}
        self._lock = threading.RLock()
        self.providers = self._config_providers()
        # Distributed mode sets this: the store of a connector's own offsets topic
        # (``offsets.storage.topic``), made when the first connector names that topic.
        self.connector_offsets: Callable[[str], OffsetBackingStore] | None = None
        self._connector_stores: dict[str, OffsetBackingStore] = {}
        self.startup_counts = StartupCounts()
        self._sampler = MetricsSampler(lambda: list(self.tasks.values()))

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        use_worker_switch_interval()  # helper threads' I/O is not held up by busy task threads
        self.offsets.start()
        self._sampler.start()
        log.info("worker %s started", self.worker_id)

    def stop(self) -> None:
        with self._lock:
            tasks = list(self.tasks)
            names = list(self.connectors)
        self.stop_and_await_tasks(tasks)
        for name in names:
            self.stop_connector(name)
        self._sampler.stop()
        self.offsets.stop()
        for store in self._connector_stores.values():
            store.stop()
        for p in self.providers.values():
            p.close()
        log.info("worker %s stopped", self.worker_id)

    def _config_providers(self) -> dict[str, ConfigProvider]:
        providers: dict[str, ConfigProvider] = {}
        for alias in self.config.config_providers:
            cls, params = self.config.provider_settings(alias)
            if not cls:
                raise ConnectException(f"config.providers.{alias}.class is not set")
            providers[alias] = self.plugins.new_config_provider(cls, params)
        return providers

    def resolve(self, config: Mapping[str, str]) -> dict[str, str]:
        return resolve(config, self.providers)

    def _register_secrets(self, connector_props: Mapping[str, str], *more: Mapping[str, str]) -> None:
        """Hide the values of the connector's password keys from every log line and trace
        (resolved values: a config provider's secret is as secret as a literal one)."""
        try:
            desc = self.plugins.find(
                connector_props.get("connector.class", ""), (PluginType.SOURCE, PluginType.SINK)
            )
            password_keys = {d.name for d in plugin_key_defs(desc) if d.type == "PASSWORD"}
        except PluginNotFound:
            password_keys = set()  # reported where the connector is created; client keys still count
        for props in (connector_props, *more):
            SECRETS.register(secret_values(props, password_keys))

    def offsets_for(self, connector: str, props: Mapping[str, str]) -> OffsetBackingStore:
        """Where a source connector's offsets live: its own ``offsets.storage.topic`` (over the
        worker's store), or the worker's store."""
        topic = (props.get("offsets.storage.topic") or "").strip()
        if not topic or topic == getattr(self.config, "offset_storage_topic", None):
            return self.offsets
        if self.connector_offsets is None:
            if topic not in _ignored_topics:
                _ignored_topics.add(topic)
                log.warning(
                    "connector %s names offsets.storage.topic=%s; this worker keeps offsets in %s only",
                    connector,
                    topic,
                    type(self.offsets).__name__,
                )
            return self.offsets
        with self._lock:
            store = self._connector_stores.get(topic)
            if store is None:
                store = LayeredOffsetBackingStore(self.connector_offsets(topic), self.offsets)
                store.start()
                self._connector_stores[topic] = store
        return store

    @property
    def exactly_once_enabled(self) -> bool:
        """``exactly.once.source.support=enabled``: source tasks run transactionally (KIP-618;
        distributed mode only)."""
        return (
            isinstance(self.config, DistributedConfig)
            and self.config.exactly_once_source_support == "enabled"
        )

    def fence_zombies(self, connector: str, task_count: int, props: Mapping[str, str]) -> None:
        """Fence the producers of tasks 0..``task_count``-1 of ``connector`` (Kafka's
        ``Worker.fenceZombies``), with the connector's client settings; blocks."""
        assert isinstance(self.config, DistributedConfig)
        runtime = SourceRuntimeConfig.parse(self.resolve(props))
        base = clients.producer_config(
            self.config.bootstrap_servers,
            f"connector-fencer-{connector}",
            self.config.client_settings("producer."),
            runtime.client_overrides("producer"),
        )
        group = self.config.group_id
        fence_producers(base, [task_transactional_id(group, connector, i) for i in range(task_count)])

    # -- connectors -------------------------------------------------------------------

    def start_connector(
        self, name: str, props: Mapping[str, str], target: TargetState, on_reconfigure: Callable[[str], None]
    ) -> bool:
        """Start (or move to ``target``) a connector; False if it failed (status says why)."""
        with self._lock:
            if name in self.connectors:
                raise ConnectException(f"connector {name} is already running on this worker")
        self.startup_counts.connector_attempts += 1
        try:
            resolved = self.resolve(props)
            self._register_secrets(resolved)
            connector = self.plugins.new_connector(resolved["connector.class"])
        except Exception as exc:
            self.startup_counts.connector_failures += 1
            log.error("connector %s could not be created", name, exc_info=exc)
            self.status.on_status(name, None, Status(State.FAILED, self.worker_id, trace_of(exc)))
            return False
        reader = (
            None
            if isinstance(connector, SinkConnector)
            else ConnectorOffsetReader(self.offsets_for(name, resolved), name)
        )
        wc = WorkerConnector(name, connector, self.worker_id, self.status, reader, on_reconfigure)
        with self._lock:
            self.connectors[name] = wc
        started = bool(self._wait(wc.start(resolved, target), f"starting connector {name}"))
        if started:
            self.startup_counts.connector_successes += 1
        else:
            self.startup_counts.connector_failures += 1
        return started

    def reconfigure_connector(self, name: str, props: Mapping[str, str]) -> bool:
        wc = self.connectors.get(name)
        if wc is None:
            return False
        return bool(self._wait(wc.reconfigure(self.resolve(props)), f"reconfiguring connector {name}"))

    def set_connector_target(self, name: str, target: TargetState) -> None:
        wc = self.connectors.get(name)
        if wc is not None:
            self._wait(wc.transition_to(target), f"moving connector {name} to {target.value}")

    def connector_task_configs(self, name: str, props: Mapping[str, str]) -> list[dict[str, str]]:
        """The connector's task configs, each with ``task.class``; [] if it is not running."""
        wc = self.connectors.get(name)
        if wc is None or not wc.started:
            return []
        max_tasks = int(props.get("tasks.max", "1"))
        configs = self._wait(wc.task_configs(max_tasks), f"asking connector {name} for task configs")
        if configs is None:
            return []
        enforce = str(props.get("tasks.max.enforce", "true")).lower() != "false"
        if len(configs) > max_tasks:
            message = (
                f"connector {name} generated {len(configs)} task configs, more than tasks.max={max_tasks}"
            )
            if enforce:
                wc.fail(ConnectException(message))
                return []
            log.warning("%s; running them anyway (tasks.max.enforce=false)", message)
        task_class = wc.task_class_name()
        return [{**c, TASK_CLASS_CONFIG: task_class} for c in configs]

    def stop_connector(self, name: str) -> None:
        with self._lock:
            wc = self.connectors.pop(name, None)
        if wc is not None:
            self._wait(wc.stop(), f"stopping connector {name}")

    def connector_running(self, name: str) -> bool:
        wc = self.connectors.get(name)
        return wc is not None and wc.started and not wc.failed

    def _wait(self, future: Any, what: str) -> Any:
        try:
            return future.result(CONNECTOR_CALL_TIMEOUT_S)
        except FutureTimeout:
            log.error("timed out after %.0f s %s", CONNECTOR_CALL_TIMEOUT_S, what)
            return None

    # -- tasks ------------------------------------------------------------------------

    def start_task(
        self,
        task_id: ConnectorTaskId,
        connector_props: Mapping[str, str],
        task_props: Mapping[str, str],
        target: TargetState,
        fence: Callable[[], None] | None = None,
        verify: Callable[[], None] | None = None,
    ) -> bool:
        """Start a task; an exactly-once source task calls ``fence`` (zombie fencing) before it
        initializes its transactions and ``verify`` (still assigned here) after."""
        with self._lock:
            if task_id in self.tasks:
                raise ConnectException(f"task {task_id} is already running on this worker")
        self.startup_counts.task_attempts += 1
        try:
            resolved_connector, resolved_task = self.resolve(connector_props), self.resolve(task_props)
            self._register_secrets(resolved_connector, resolved_task)
            runner = self._build_task(task_id, resolved_connector, resolved_task, target, fence, verify)
        except Exception as exc:
            self.startup_counts.task_failures += 1
            log.error("task %s could not be created", task_id, exc_info=exc)
            self.status.on_status(
                task_id.connector, task_id.task, Status(State.FAILED, self.worker_id, trace_of(exc))
            )
            return False
        with self._lock:
            self.tasks[task_id] = runner
        runner.start()
        self.startup_counts.task_successes += 1
        return True

    def stop_and_await_tasks(self, ids: list[ConnectorTaskId]) -> None:
        with self._lock:
            runners = [(i, self.tasks.pop(i)) for i in ids if i in self.tasks]
        for _, runner in runners:
            runner.stop()
        deadline = time.monotonic() + self.config.task_shutdown_graceful_timeout_ms / 1000
        for task_id, runner in runners:
            if not runner.await_stop(max(deadline - time.monotonic(), 0)):
                log.error("graceful stop of task %s failed", task_id)
                runner.cancel()

    def set_task_target(self, task_id: ConnectorTaskId, target: TargetState) -> None:
        runner = self.tasks.get(task_id)
        if runner is not None:
            runner.transition_to(target)

    def task_ids(self, connector: str | None = None) -> list[ConnectorTaskId]:
        with self._lock:
            return sorted(t for t in self.tasks if connector is None or t.connector == connector)

    # -- building a task ----------------------------------------------------------------

    def _build_task(
        self,
        task_id: ConnectorTaskId,
        conn: dict[str, str],
        task_props: dict[str, str],
        target: TargetState,
        fence: Callable[[], None] | None = None,
        verify: Callable[[], None] | None = None,
    ) -> WorkerTask:
        connector_cls = self.plugins.connector_class(conn["connector.class"])
        runtime = runtime_config_model(connector_cls).parse(conn)
        task = self._new_task(task_props.get(TASK_CLASS_CONFIG), connector_cls)
        key_converter, value_converter, header_converter = self._converters(runtime)
        chain = self._chain(runtime)
        errors = ErrorsConfig(
            runtime.errors_retry_timeout,
            runtime.errors_retry_delay_max_ms,
            runtime.errors_tolerance == "all",
            runtime.errors_log_enable,
            runtime.errors_log_include_messages,
        )
        reporters: list[ErrorReporter] = [LogReporter(str(task_id), errors)]
        client_base = f"connector-{task_id.connector}-{task_id.task}"
        cfg = self.config
        if isinstance(task, SinkTask):
            assert isinstance(runtime, SinkRuntimeConfig)
            if runtime.errors_deadletterqueue_topic_name:
                reporters.append(
                    DeadLetterQueueReporter(
                        runtime.errors_deadletterqueue_topic_name,
                        clients.producer_config(
                            cfg.bootstrap_servers,
                            f"{client_base}-dlq",
                            cfg.client_settings("producer."),
                            runtime.client_overrides("producer"),
                        ),
                        clients.admin_config(
                            cfg.bootstrap_servers,
                            f"{client_base}-dlq-admin",
                            cfg.client_settings("admin."),
                            runtime.client_overrides("admin"),
                        ),
                        runtime.errors_deadletterqueue_topic_replication_factor,
                        runtime.errors_deadletterqueue_context_headers_enable,
                    )
                )
            operator = RetryWithToleranceOperator(errors, task_id.connector, task_id.task, reporters)
            consumer_overrides = runtime.client_overrides("consumer")
            return WorkerSinkTask(
                task_id,
                task,
                task_props,
                self.worker_id,
                self.status,
                target,
                operator,
                key_converter,
                value_converter,
                header_converter,
                chain,
                clients.consumer_config(
                    cfg.bootstrap_servers,
                    f"connect-{task_id.connector}",
                    f"connector-consumer-{task_id.connector}-{task_id.task}",
                    cfg.client_settings("consumer."),
                    consumer_overrides,
                ),
                runtime.topics,
                runtime.topics_regex or None,
                clients.sink_batch_size(cfg.client_settings("consumer."), consumer_overrides),
                cfg.offset_flush_interval_ms,
                errant_reporting=True,
                topic_tracking=cfg.topic_tracking_enable,
            )
        if isinstance(task, SourceTask):
            assert isinstance(runtime, SourceRuntimeConfig)
            operator = RetryWithToleranceOperator(errors, task_id.connector, task_id.task, reporters)
            creation = (
                TopicCreation.from_config(conn, runtime.topic_creation_groups)
                if cfg.topic_creation_enable
                else None
            )
            offsets = self.offsets_for(task_id.connector, conn)
            exactly_once = None
            if self.exactly_once_enabled:
                # The task reads the offsets once its transactions are initialized: an open
                # transaction of its previous incarnation is aborted by then.
                exactly_once = self._exactly_once_setup(task_id, offsets, fence, verify)
            else:
                offsets.refresh(10.0)  # what this task's previous owner committed, on another worker
            return WorkerSourceTask(
                task_id,
                task,
                task_props,
                self.worker_id,
                self.status,
                target,
                operator,
                key_converter,
                value_converter,
                header_converter,
                chain,
                clients.producer_config(
                    cfg.bootstrap_servers,
                    f"connector-producer-{task_id}",
                    cfg.client_settings("producer."),
                    runtime.client_overrides("producer"),
                ),
                clients.admin_config(
                    cfg.bootstrap_servers,
                    f"connector-adminclient-{task_id}",
                    cfg.client_settings("admin."),
                    runtime.client_overrides("admin"),
                ),
                ConnectorOffsetReader(offsets, task_id.connector),
                OffsetStorageWriter(offsets, task_id.connector),
                cfg.offset_flush_interval_ms,
                cfg.offset_flush_timeout_ms,
                creation,
                topic_tracking=cfg.topic_tracking_enable,
                exactly_once=exactly_once,
                transaction_boundary=runtime.transaction_boundary,
                transaction_boundary_interval_ms=runtime.transaction_boundary_interval_ms,
            )
        raise ConnectException(f"{type(task).__name__} is neither a SourceTask nor a SinkTask")

    def _exactly_once_setup(
        self,
        task_id: ConnectorTaskId,
        offsets: OffsetBackingStore,
        fence: Callable[[], None] | None,
        verify: Callable[[], None] | None,
    ) -> ExactlyOnceSetup:
        assert isinstance(self.config, DistributedConfig)
        # The connector's own offsets topic (over the worker's) or the worker's: the task's
        # producer writes the first one; the worker's store gets a copy when it is another.
        primary, secondary = offsets, None
        if isinstance(offsets, LayeredOffsetBackingStore):
            primary, secondary = offsets.primary, offsets.secondary
        topic = getattr(primary, "topic", None)
        partitions = getattr(primary, "partition_count", None)
        if not isinstance(topic, str) or not isinstance(partitions, int) or partitions < 1:
            raise ConnectException(
                f"exactly-once source task {task_id} needs its offsets in a Kafka topic; "
                f"{type(primary).__name__} is not one"
            )
        return ExactlyOnceSetup(
            connector=task_id.connector,
            transactional_id=task_transactional_id(self.config.group_id, task_id.connector, task_id.task),
            offsets_topic=topic,
            offsets_partitions=partitions,
            refresh=offsets.refresh,
            secondary=secondary,
            fence=fence,
            verify=verify,
        )

    def _new_task(self, class_name: str | None, connector_cls: type[Connector]) -> Task:
        if class_name:
            module_name, _, attr = class_name.rpartition(".")
            try:
                cls = getattr(import_plugin_module(module_name), attr)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ConnectException(f"cannot load task class {class_name}: {exc}") from exc
        else:
            cls = connector_cls().task_class()
        if not (isinstance(cls, type) and issubclass(cls, Task)):
            raise ConnectException(f"{class_name} is not a Task")
        return cls()

    def _converters(self, runtime: ConnectorRuntimeConfig) -> tuple[Any, Any, Any]:
        cfg = self.config

        def pick(kind: str, own: str | None, default: str) -> tuple[str, dict[str, Any]]:
            # A connector's converter settings apply when it names its own converter class.
            if own:
                return own, runtime.converter_settings(kind)
            return default, cfg.with_prefix(f"{kind}.converter.")

        k_name, k_conf = pick("key", runtime.key_converter, cfg.key_converter)
        v_name, v_conf = pick("value", runtime.value_converter, cfg.value_converter)
        h_name, h_conf = pick("header", runtime.header_converter, cfg.header_converter)
        return (
            self.plugins.new_converter(k_name, k_conf, True),
            self.plugins.new_converter(v_name, v_conf, False),
            self.plugins.new_header_converter(h_name, h_conf),
        )

    def _chain(self, runtime: ConnectorRuntimeConfig) -> TransformationChain[Any]:
        predicates = {}
        for alias in runtime.predicates:
            settings = runtime.predicate_settings(alias)
            type_name = settings.pop("type", None)
            if not type_name:
                raise ConnectException(f"predicates.{alias}.type is not set")
            predicates[alias] = self.plugins.new_predicate(str(type_name), settings)
        stages: list[TransformationStage[Any]] = []
        for alias in runtime.transforms:
            settings = runtime.transform_settings(alias)
            type_name = settings.pop("type", None)
            if not type_name:
                raise ConnectException(f"transforms.{alias}.type is not set")
            pred_alias = settings.pop("predicate", None)
            negate = str(settings.pop("negate", "false")).strip().lower() == "true"
            if pred_alias is not None and pred_alias not in predicates:
                raise ConnectException(
                    f"transforms.{alias}.predicate names an unknown predicate {pred_alias}"
                )
            stages.append(
                TransformationStage(
                    alias,
                    self.plugins.new_transformation(str(type_name), settings),
                    predicates.get(str(pred_alias)) if pred_alias else None,
                    negate,
                )
            )
        return TransformationChain(stages)
