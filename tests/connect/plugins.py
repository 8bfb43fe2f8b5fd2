"""Plugins that the worker integration tests load by dotted name, as users load theirs.

They import only ``connect.api`` and keep what they see in module-level registries
keyed by connector name, so a test can look at exactly what the framework handed
them. Behaviours (failures, retries, rewinds) are switched on by connector config.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from connect.api import (
    ConnectException,
    ConnectorConfig,
    ConvertedBatch,
    Converter,
    Field,
    RawForm,
    RecordMetadata,
    RetriableException,
    Schema,
    SchemaAndValue,
    SecretStr,
    SinkConnector,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    TopicPartition,
)

_lock = threading.Lock()
PUT: dict[str, list[SinkRecord]] = defaultdict(list)
COMMITTED: dict[str, list[tuple[SourceRecord, RecordMetadata | None]]] = defaultdict(list)
# Per topic: the sizes of the batches TextConverter converted, and its one-value calls.
BATCHES: dict[str, list[int]] = defaultdict(list)
SINGLES: dict[str, int] = defaultdict(int)
EVENTS: dict[str, list[str]] = defaultdict(list)
# JsonRunsSinkTask: per connector, what each put() was given, in order: ("runs", [(topic,
# partition, offsets, texts), ...]) for a batch of JSON runs, ("text", [...]) likewise for
# text runs, ("records", [record, ...]) else.
# With read.records=true the records of a batch of runs are read too, into RUN_RECORDS.
PUTS: dict[str, list[tuple[str, list[Any]]]] = defaultdict(list)
RUN_RECORDS: dict[str, list[SinkRecord]] = defaultdict(list)


def reset() -> None:
    with _lock:
        PUT.clear()
        PUTS.clear()
        RUN_RECORDS.clear()
        COMMITTED.clear()
        EVENTS.clear()


def event(name: str, what: str) -> None:
    with _lock:
        EVENTS[name].append(what)


class RecordingSinkConnector(SinkConnector):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return RecordingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class RecordingSinkTask(SinkTask):
    """Keeps every record it is given; optional failures, retries, rewinds and error reports."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        self.retriable_left = int(props.get("retriable.failures", "0"))
        self.down_left = int(props.get("down.calls", "0"))
        self.fail_after = int(props.get("fail.after", "-1"))
        self.rewind_once = props.get("rewind.once") == "true"
        self.report_values = set(filter(None, props.get("report.values", "").split(",")))
        # Report bad records only at the next put(), as asynchronous writers do.
        self.report_late = props.get("report.late") == "true"
        self.late: list[SinkRecord] = []
        self.timeout_ms = int(props.get("retry.timeout.ms", "100"))
        self.put_delay_s = int(props.get("put.delay.ms", "0")) / 1000  # a slow destination
        self.seen = 0
        event(self.name, "start")

    def open(self, partitions: Collection[TopicPartition]) -> None:
        event(self.name, "open " + ",".join(str(p) for p in sorted(partitions)))

    def close(self, partitions: Collection[TopicPartition]) -> None:
        event(self.name, "close " + ",".join(str(p) for p in sorted(partitions)))

    def put(self, records: SinkRecordBatch) -> None:
        if self.down_left > 0:  # a destination away for a while: every call is refused
            self.down_left -= 1
            self.context.timeout(self.timeout_ms)
            raise RetriableException("destination away")
        if not records:
            return
        if self.put_delay_s:
            event(self.name, f"putting {len(records)}")
            time.sleep(self.put_delay_s)
        late, self.late = self.late, []
        for r in late:  # reported once a newer batch has replaced theirs
            reporter = self.context.errant_record_reporter()
            assert reporter is not None
            reporter.report(r, ValueError(f"cannot handle {r.value!r}"))
        if self.retriable_left > 0:
            self.retriable_left -= 1
            event(self.name, f"retriable {len(records)}")
            self.context.timeout(self.timeout_ms)
            raise RetriableException("try again")
        if self.rewind_once:
            self.rewind_once = False
            first = next(iter(records))
            event(self.name, "rewind")
            self.context.offset(TopicPartition(first.topic, first.kafka_partition or 0), 0)
            return
        reporter = self.context.errant_record_reporter()
        kept = []
        for r in records:
            if isinstance(r.value, str) and r.value in self.report_values and reporter is not None:
                if self.report_late:
                    self.late.append(r)
                else:
                    reporter.report(r, ValueError(f"cannot handle {r.value!r}"))
            else:
                kept.append(r)
        with _lock:
            PUT[self.name].extend(kept)
        self.seen += len(kept)
        if 0 <= self.fail_after <= self.seen:
            raise ConnectException(f"sink {self.name} fails after {self.seen} records")

    def stop(self) -> None:
        event(self.name, "stop")


class JsonRunsSinkConnector(RecordingSinkConnector):
    def task_class(self) -> type[Task]:
        return JsonRunsSinkTask


class JsonRunsSinkTask(SinkTask):
    """Asks for values as JSON text (unless json.runs=false), then as UTF-8 text (with
    text.runs=true), and keeps what each put() was given."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        self.forms: list[RawForm] = []
        if props.get("json.runs", "true") == "true":
            self.forms.append("json")
        if props.get("text.runs") == "true":
            self.forms.append("text")
        self.read_records = props.get("read.records") == "true"

    def put(self, records: SinkRecordBatch) -> None:
        for form in self.forms:
            value_runs = records.value_runs(form)
            if value_runs is not None:
                if not value_runs:
                    return
                runs = [(r.topic, r.partition, list(r.offsets), list(r.texts)) for r in value_runs]
                made = list(records) if self.read_records else []
                with _lock:
                    PUTS[self.name].append(("runs" if form == "json" else "text", runs))
                    RUN_RECORDS[self.name].extend(made)
                return
        if not records:
            return
        with _lock:
            PUTS[self.name].append(("records", list(records)))

    def stop(self) -> None:
        pass


class CountingSourceConnector(SourceConnector):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return CommitRecordSourceTask if self.props.get("commit.record") == "true" else CountingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.number": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass


class CountingSourceTask(SourceTask):
    """Emits ``count`` records ("v-<n>") with offset {"n": n}, resuming after the committed one."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        self.topic = props["topic"]
        self.count = int(props.get("count", "10"))
        self.fail_after = int(props.get("fail.after", "-1"))
        self.batch = int(props.get("batch", "5"))
        self.headers = props.get("headers") == "true"
        self.interval = int(props.get("interval.ms", "0")) / 1000
        self.bad_key_at = int(props.get("bad.key.at", "-1"))  # a key that does not fit its schema
        self.partition = {"source": self.name, "task": props.get("task.number", "0")}
        offset = self.context.offset_storage_reader().offset(self.partition)
        self.n = int(offset["n"]) if offset else 0
        event(self.name, f"start at {self.n}")

    def poll(self) -> list[SourceRecord] | None:
        if self.n >= self.count:
            time.sleep(0.05)
            return None
        if 0 <= self.fail_after <= self.n:
            raise ConnectException(f"source {self.name} fails at record {self.n}")
        if self.interval:
            time.sleep(self.interval)
        out = []
        for _ in range(min(self.batch, self.count - self.n)):
            self.n += 1
            r = SourceRecord(
                self.partition,
                {"n": self.n},
                self.topic,
                value_schema=Schema.STRING_SCHEMA,
                value=f"v-{self.n}",
                key_schema=Schema.INT32_SCHEMA if self.n == self.bad_key_at else Schema.STRING_SCHEMA,
                key="not a number" if self.n == self.bad_key_at else f"k-{self.n % 3}",
            )
            if self.headers:
                r.headers.add("n", self.n, Schema.INT32_SCHEMA).add("source", self.name, Schema.STRING_SCHEMA)
            out.append(r)
        return out

    def stop(self) -> None:
        event(self.name, "stop")


class CommitRecordSourceTask(CountingSourceTask):
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        with _lock:
            COMMITTED[self.name].append((record, metadata))


class FixedTaskConfigsConnector(CountingSourceConnector):
    """Task configs that carry only what the tasks read: a change to the connector's
    worker-side keys (converters, transforms) leaves them as they were."""

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        keep = ("name", "topic", "count", "interval.ms")
        return [
            {**{k: self.props[k] for k in keep if k in self.props}, "task.number": str(i)}
            for i in range(max_tasks)
        ]


class TooManyTasksConnector(CountingSourceConnector):
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks + 1)]


class FailingStartConnector(CountingSourceConnector):
    def start(self, props: dict[str, str]) -> None:
        raise ConnectException("this connector refuses to start")


class ReconfiguringSourceConnector(SourceConnector):
    """Runs as many tasks as the number in the file ``tasks.file``; asks for a
    reconfiguration whenever that number changes."""

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        self.path = Path(props["tasks.file"])
        self.current = self._read()
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _read(self) -> int:
        try:
            return int(self.path.read_text().strip() or "1")
        except (OSError, ValueError):
            return 1

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            n = self._read()
            if n != self.current:
                self.current = n
                self.context.request_task_reconfiguration()

    def task_class(self) -> type[Task]:
        return CountingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [
            {**self.props, "task.number": str(i), "count": "0"} for i in range(min(self.current, max_tasks))
        ]

    def stop(self) -> None:
        self._stop.set()


class TextConverter(Converter):
    """UTF-8 text with a batch method of its own; refuses values starting with "!"."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes:
        return str(value).encode()

    def to_connect_data(self, topic: str, data: bytes | None, headers: Any = None) -> SchemaAndValue:
        with _lock:
            SINGLES[topic] += 1
        if data is not None and data.startswith(b"!"):
            raise ValueError(f"refusing {data!r}")
        return SchemaAndValue(None, None if data is None else data.decode())

    def to_connect_batch(self, topic: str, data: Any) -> ConvertedBatch:
        with _lock:
            BATCHES[topic].append(len(data))
        if any(d is not None and d.startswith(b"!") for d in data):
            raise ValueError("one of the batch is refused")
        return ConvertedBatch([None] * len(data), [None if d is None else d.decode() for d in data])


def refuse_boom(record: Any) -> Any:
    """A transformation that fails on values containing "boom"."""
    if "boom" in str(record.value):
        raise ValueError(f"boom at offset {record.kafka_offset}")
    return record


def upper_value(record: Any) -> Any:
    """A plain-function transformation."""
    return record.new_record(value=str(record.value).upper())


def drop_even(record: Any) -> Any:
    return None if str(record.value).endswith(("0", "2", "4", "6", "8")) else record


def value_map(config: Mapping[str, str]) -> dict[str, str]:
    return dict(config)


class FailingTaskConfigsConnector(CountingSourceConnector):
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        raise ConnectException("this connector cannot make task configs")


class LeakyConfig(ConnectorConfig):
    connection_password: SecretStr = Field(alias="connection.password", description="A password.")
    fail_in: str = Field("connector", alias="fail.in", description="connector or task")


class LeakySourceConnector(SourceConnector):
    """Fails (in its own start or its task's) with an error that quotes its password, as
    database drivers' errors sometimes quote connection strings."""

    Config = LeakyConfig

    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        if props.get("fail.in", "connector") == "connector":
            raise RuntimeError(f"cannot log in with password {props['connection.password']}")

    def task_class(self) -> type[Task]:
        return LeakySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


class LeakySourceTask(SourceTask):
    def version(self) -> str:
        return "test"

    def start(self, props: dict[str, str]) -> None:
        raise RuntimeError(f"task cannot log in with password {props['connection.password']}")

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass
