"""Sluiceway's pytest plugin: a real broker and Connect worker for a plugin's tests.

Sluiceway registers this module under pytest's ``pytest11`` entry point, so these
fixtures exist in every pytest run of an environment where Sluiceway is installed;
nothing starts, and nothing heavier than pytest is imported, until a test asks for one.
Nothing is faked: records go through the Kafka protocol to Sluiceway's broker, the
worker is the real standalone worker (``sluiceway.embedded.EmbeddedConnect``), offsets and
statuses go where they go in production.

Fixtures (function-scoped: each test gets a broker, a worker, source offsets and
consumer groups of its own, so no test sees another's records or committed offsets;
together they start in about a second):

``sluiceway_worker_config`` -> ``dict[str, str]``
    Worker keys added to (or replacing) ``EmbeddedConnect``'s defaults (string key and
    value converters, ``offset.flush.interval.ms=500``). Empty; override the fixture in
    a ``conftest.py`` or test module to change them::

        @pytest.fixture
        def sluiceway_worker_config() -> dict[str, str]:
            return {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false"}

``sluiceway_broker`` -> ``broker.server.EmbeddedBroker``
    Sluiceway's broker in this process, on an ephemeral 127.0.0.1 port; ``.bootstrap``
    is its address for any Kafka client.

``sluiceway_connect`` -> ``sluiceway.embedded.EmbeddedConnect``
    A standalone worker on that broker with its REST API on an ephemeral port:
    ``create_connector(name, config)``, ``wait_for_running(name, tasks)``,
    ``status(name)``, ``request(method, path, body)``, ``produce``, ``consume``.

``sluiceway_harness`` -> ``PluginHarness``
    The worker plus the helpers a plugin's end-to-end test needs:

    - ``start_connector(name, config, tasks=1)``: create it and wait until it and its
      tasks run;
    - ``feed_sink(connector, values, keys=None, as_json=False)``: produce ``values``
      (None as a tombstone, bytes as they are, str as UTF-8 or with ``as_json`` as JSON
      strings, anything else as JSON) to the sink's topic and
      return once the sink has taken them, i.e. once its consumer group's committed
      offsets reach the end of every partition: the task has flushed them
      (``flush``/``pre_commit``) and the worker committed;
    - ``drain(topic, count, connector=None)``: the first ``count`` records of a topic,
      decoded with the converters the connector uses (its own ``key.converter``/
      ``value.converter``, else the worker's), as ``DrainedRecord``s.

    A helper that gives up says why, with the connector's status (a failed task's
    trace included) in its message.

A sink's test::

    def test_sink_writes_lines(sluiceway_harness, tmp_path):
        out = tmp_path / "out.txt"
        sluiceway_harness.start_connector(
            "sink", {"connector.class": "FileStreamSink", "topics": "lines", "file": str(out)})
        sluiceway_harness.feed_sink("sink", ["a", "b"])
        assert out.read_text() == "a\\nb\\n"

A source's::

    def test_source_counts(sluiceway_harness):
        sluiceway_harness.start_connector("src", {"connector.class": "mypkg.CounterSourceConnector",
                                                  "topic": "counts"})
        assert [r.value for r in sluiceway_harness.drain("counts", 3, connector="src")] == ["0", "1", "2"]
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    # Only for annotations: importing these starts nothing, but costs time every pytest run pays.
    from broker.server import EmbeddedBroker
    from connect.api.converter import Converter
    from connect.api.data import Schema
    from sluiceway.embedded import EmbeddedConnect

__all__ = [
    "DrainedRecord",
    "PluginHarness",
    "sluiceway_broker",
    "sluiceway_connect",
    "sluiceway_harness",
    "sluiceway_worker_config",
]

# Keeps a consumer group quick to form in a test (the broker's default waits 3 s).
_BROKER_SETTINGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5"}
_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class DrainedRecord:
    """A record read back from a topic, key and value decoded by the converters in use."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: Any
    value: Any
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


def _encode(value: Any, as_json: bool = False) -> bytes | None:
    """How ``feed_sink`` writes a value: None as null, bytes as they are, str as UTF-8 (or as
    a JSON string with ``as_json``), anything else as JSON."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str) and not as_json:
        return value.encode()
    import orjson

    return orjson.dumps(value)


class PluginHarness:
    """Helpers for a plugin's end-to-end tests against a real worker (``sluiceway_harness``)."""

    def __init__(self, connect: EmbeddedConnect, timeout: float = 30.0) -> None:
        self.connect = connect
        #: How long a helper waits before it fails (seconds).
        self.timeout = timeout

    @property
    def bootstrap(self) -> str:
        """The broker's address, for Kafka clients of the test's own."""
        return self.connect.bootstrap

    # -- connectors -----------------------------------------------------------------------

    def start_connector(self, name: str, config: Mapping[str, str], tasks: int = 1) -> dict[str, Any]:
        """Create (or reconfigure) connector ``name`` and wait until it and ``tasks`` tasks
        are RUNNING; returns its status."""
        self.connect.create_connector(name, config)
        return self.connect.wait_for_running(name, tasks=tasks, timeout=self.timeout)

    def connector_config(self, name: str) -> dict[str, str]:
        """The connector's stored config, from the REST API."""
        r = self.connect.request("GET", f"/connectors/{name}/config")
        if r.status_code != 200:
            raise AssertionError(f"no connector {name}: {r.status_code} {r.text}")
        return dict(r.json())

    def _check_not_failed(self, name: str) -> None:
        r = self.connect.request("GET", f"/connectors/{name}/status")
        if r.status_code != 200:
            raise AssertionError(f"no connector {name}: {r.status_code} {r.text}")
        status = r.json()
        failed = [status["connector"]] if status["connector"]["state"] == "FAILED" else []
        failed += [t for t in status["tasks"] if t["state"] == "FAILED"]
        if failed:
            traces = "\n".join(str(f.get("trace", "(no trace)")) for f in failed)
            raise AssertionError(f"connector {name} failed; status {status}\n{traces}")

    # -- sinks ----------------------------------------------------------------------------

    def produce(
        self,
        topic: str,
        values: Iterable[Any],
        keys: Iterable[Any] | None = None,
        headers: Sequence[tuple[str, str | bytes | None]] | None = None,
        as_json: bool = False,
    ) -> dict[int, int]:
        """Write ``values`` (with ``keys``, one per value, if given) to ``topic``, encoded as
        ``feed_sink`` says; returns each partition's end offset afterwards."""
        from confluent_kafka import Producer

        values = list(values)
        key_list = list(keys) if keys is not None else [None] * len(values)
        if len(key_list) != len(values):
            raise ValueError(f"{len(key_list)} keys for {len(values)} values")
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 2})
        failures: list[str] = []

        def delivered(err: Any, msg: Any) -> None:
            if err is not None:
                failures.append(str(err))

        for key, value in zip(key_list, values, strict=True):
            producer.produce(
                topic,
                key=_encode(key, as_json),
                value=_encode(value, as_json),
                headers=list(headers or []),
                on_delivery=delivered,
            )
        remaining = producer.flush(self.timeout)
        if remaining or failures:
            raise AssertionError(f"{remaining} records undelivered to {topic}; errors: {failures}")
        return self.end_offsets(topic)

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Each partition of ``topic`` with its end offset (high watermark)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "sluiceway-testing-metadata"})
        try:
            partitions = self._partitions(consumer, topic)
            return {
                p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions
            }
        finally:
            consumer.close()

    def _partitions(self, consumer: Any, topic: str) -> list[int]:
        """The partitions of ``topic``, waiting for it to exist (a source creates it when it
        writes its first record)."""
        deadline = time.monotonic() + self.timeout
        while True:
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            if meta is not None and meta.error is None and meta.partitions:
                return sorted(meta.partitions)
            if time.monotonic() >= deadline:
                raise AssertionError(f"topic {topic} does not exist after {self.timeout} s")
            time.sleep(_POLL_S)

    def feed_sink(
        self,
        connector: str,
        values: Iterable[Any],
        keys: Iterable[Any] | None = None,
        topic: str | None = None,
        headers: Sequence[tuple[str, str | bytes | None]] | None = None,
        as_json: bool = False,
    ) -> None:
        """Produce ``values`` to the sink's topic (``topic``, or its one ``topics`` entry) and
        wait until the sink has taken them: its consumer group committed offsets up to the
        end of every partition, which it does only for records its task flushed.

        Values and keys are written as None -> null, bytes as they are, str as UTF-8,
        anything else as JSON; ``as_json`` writes strings as JSON strings too (for a sink
        reading with ``JsonConverter``)."""
        config = self.connector_config(connector)
        if topic is None:
            topics = [t.strip() for t in config.get("topics", "").split(",") if t.strip()]
            if len(topics) != 1:
                raise ValueError(
                    f"connector {connector} reads topics={config.get('topics', '')!r} "
                    f"topics.regex={config.get('topics.regex', '')!r}: pass topic= to say which one to feed"
                )
            topic = topics[0]
        ends = self.produce(topic, values, keys, headers, as_json)
        self.wait_for_sink(connector, {topic: ends}, config)

    def wait_for_sink(
        self,
        connector: str,
        ends: Mapping[str, Mapping[int, int]] | None = None,
        config: Mapping[str, str] | None = None,
    ) -> None:
        """Wait until sink ``connector``'s committed offsets reach ``ends`` (topic ->
        partition -> offset; default: the current end of each of its ``topics``)."""
        from confluent_kafka import Consumer, TopicPartition

        config = dict(config) if config is not None else self.connector_config(connector)
        if ends is None:
            topics = [t.strip() for t in config.get("topics", "").split(",") if t.strip()]
            ends = {t: self.end_offsets(t) for t in topics}
        # The worker names the group connect-<name> unless the connector overrides it.
        group = config.get("consumer.override.group.id", f"connect-{connector}")
        wanted = [TopicPartition(t, p) for t, parts in ends.items() for p, end in parts.items() if end > 0]
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group})
        committed: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + self.timeout
        try:
            while True:
                self._check_not_failed(connector)
                committed = {
                    (tp.topic, tp.partition): tp.offset for tp in consumer.committed(wanted, timeout=10)
                }
                if all(committed[(tp.topic, tp.partition)] >= ends[tp.topic][tp.partition] for tp in wanted):
                    return
                if time.monotonic() >= deadline:
                    break
                time.sleep(_POLL_S)
        finally:
            consumer.close()
        behind = {
            f"{t}-{p}": f"committed {committed.get((t, p))}, end {end}"
            for t, parts in ends.items()
            for p, end in parts.items()
            if end > 0 and committed.get((t, p), -1) < end
        }
        raise AssertionError(
            f"sink {connector} (group {group}) did not commit up to the end within {self.timeout} s: "
            f"{behind}; status {self.connect.status(connector)}"
        )

    # -- sources --------------------------------------------------------------------------

    def converters(self, connector: str | None = None) -> tuple[Converter, Converter]:
        """The key and value converters records of ``connector`` (or of any connector
        that does not name its own) are written with, configured as the worker does."""
        config = self.connector_config(connector) if connector is not None else {}
        worker = self.connect.config_values
        runtime = self.connect.runtime
        assert runtime is not None, "the worker is not started"
        out = []
        for kind in ("key", "value"):
            # As the worker picks them: a connector's converter settings apply only when it
            # names its own converter class.
            settings = config if config.get(f"{kind}.converter") else worker
            prefix = f"{kind}.converter."
            conf = {k[len(prefix) :]: v for k, v in settings.items() if k.startswith(prefix)}
            out.append(
                runtime.herder.plugins.new_converter(settings[f"{kind}.converter"], conf, kind == "key")
            )
        return out[0], out[1]

    def drain(
        self, topic: str, count: int, connector: str | None = None, timeout: float | None = None
    ) -> list[DrainedRecord]:
        """The first ``count`` records of ``topic`` (ordered by partition, then offset),
        decoded with ``connector``'s converters (the worker's when None). Fails if fewer
        arrive within ``timeout`` (default ``self.timeout``) or the connector fails."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        wait = self.timeout if timeout is None else timeout
        key_converter, value_converter = self.converters(connector)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "sluiceway-testing-drain",
                "enable.auto.commit": False,
            }
        )
        messages: list[Any] = []
        deadline = time.monotonic() + wait
        try:
            partitions = self._partitions(consumer, topic)
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
            while len(messages) < count:
                if connector is not None:
                    self._check_not_failed(connector)
                messages += [m for m in consumer.consume(count - len(messages), 0.2) if m.error() is None]
                if len(messages) < count and time.monotonic() >= deadline:
                    status = f"; status {self.connect.status(connector)}" if connector is not None else ""
                    raise AssertionError(
                        f"only {len(messages)} of {count} records arrived on {topic}{status}"
                    )
        finally:
            consumer.close()
        out = []
        for m in sorted(messages, key=lambda m: (m.partition(), m.offset())):
            key = key_converter.to_connect_data(topic, m.key())
            value = value_converter.to_connect_data(topic, m.value())
            kind, ts = m.timestamp()
            out.append(
                DrainedRecord(
                    topic=topic,
                    partition=m.partition(),
                    offset=m.offset(),
                    timestamp=ts if kind else None,
                    key=key.value,
                    value=value.value,
                    key_schema=key.schema,
                    value_schema=value.schema,
                    headers=[(k, v) for k, v in (m.headers() or [])],
                )
            )
        return out


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def sluiceway_worker_config() -> dict[str, str]:
    """Worker keys on top of ``EmbeddedConnect``'s defaults; override to change them."""
    return {}


@pytest.fixture
def sluiceway_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """Sluiceway's broker in this process, on an ephemeral port (``.bootstrap``)."""
    from broker.config import load_config
    from broker.server import EmbeddedBroker

    log_dirs = tmp_path_factory.mktemp("sluiceway-broker")
    broker = EmbeddedBroker(
        load_config({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(log_dirs), **_BROKER_SETTINGS})
    ).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def sluiceway_connect(
    sluiceway_broker: EmbeddedBroker,
    sluiceway_worker_config: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[EmbeddedConnect]:
    """A standalone worker on ``sluiceway_broker``, REST API on an ephemeral port."""
    from sluiceway.embedded import EmbeddedConnect

    work_dir: Path = tmp_path_factory.mktemp("sluiceway-connect")
    with EmbeddedConnect(
        work_dir, sluiceway_worker_config, bootstrap_servers=sluiceway_broker.bootstrap
    ) as c:
        yield c


@pytest.fixture
def sluiceway_harness(sluiceway_connect: EmbeddedConnect) -> PluginHarness:
    """``sluiceway_connect`` with helpers to start connectors, feed sinks and drain topics."""
    return PluginHarness(sluiceway_connect)
