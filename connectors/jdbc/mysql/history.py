"""The schema history topic: Debezium's ``KafkaSchemaHistory`` over confluent-kafka clients.

Row events only make sense against the table schemas in force where they were written, so
the connector records every DDL statement it applies, with its binlog position, in a topic
of its own, and on restart rebuilds the catalog by replaying the statements recorded at or
before the offset it resumes from (the broker's offsets alone cannot say what the tables
looked like then).

As Debezium: the topic has one partition (the order of statements matters), ``cleanup.policy
=delete`` with unlimited retention (``retention.ms=-1``, ``retention.bytes=-1``: compaction or
expiry would lose statements); each record has a null key and a ``HistoryRecord`` JSON value
``{source: {server}, position: {offset}, ts_ms, databaseName, ddl, tableChanges}`` whose
``tableChanges`` follow ``JsonTableChangeSerializer`` (see ``schema_changes``). Recovery reads
from the beginning to the end offset it saw when it started, giving up after
``recovery_attempts`` consecutive polls that return nothing; records of another server
(``source.server``) or past the offset are not applied.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import ConnectException
from connectors.jdbc.mysql.schema import DdlError, SchemaCatalog, TableChange
from connectors.jdbc.mysql.schema_changes import change_fields

__all__ = ["TOPIC_CONFIG", "SchemaHistory", "history_value", "position_at_or_before"]

log = logging.getLogger(__name__)

TOPIC_CONFIG = {"cleanup.policy": "delete", "retention.ms": "-1", "retention.bytes": "-1"}


def history_value(
    server_name: str,
    position: Mapping[str, Any],
    database: str | None,
    ddl: str,
    changes: Sequence[TableChange],
    ts_ms: int,
    source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``HistoryRecord`` document, in Debezium's key order."""
    document: dict[str, Any] = {
        "source": dict(source) if source is not None else {"server": server_name},
        "position": dict(position),
        "ts_ms": ts_ms,
    }
    if database is not None:
        document["databaseName"] = database
    document["ddl"] = ddl
    document["tableChanges"] = [change_fields(c) for c in changes]
    return document


# -- positions -----------------------------------------------------------------------------------

_MYSQL_GTID = re.compile(r"^([0-9a-fA-F-]{36})((?::\d+(?:-\d+)?)+)$")
_MARIADB_GTID = re.compile(r"^(\d+)-(\d+)-(\d+)$")


def _gtid_set(text: str) -> dict[str, list[tuple[int, int]]] | dict[str, int]:
    """MySQL ``uuid:1-5:7,...`` as {uuid: intervals}, or MariaDB ``domain-server-seq,...`` as
    {domain: seq}; raises ValueError for anything else."""
    parts = [p.strip() for p in text.replace("\n", "").split(",") if p.strip()]
    if parts and all(_MARIADB_GTID.match(p) for p in parts):
        maria: dict[str, int] = {}
        for part in parts:
            domain, _server, seq = part.split("-")
            maria[domain] = max(maria.get(domain, 0), int(seq))
        return maria
    mysql: dict[str, list[tuple[int, int]]] = {}
    for part in parts:
        match = _MYSQL_GTID.match(part)
        if match is None:
            raise ValueError(f"not a GTID set: {text!r}")
        intervals = mysql.setdefault(match.group(1).lower(), [])
        for interval in match.group(2).strip(":").split(":"):
            low, _, high = interval.partition("-")
            intervals.append((int(low), int(high or low)))
    return mysql


def _gtids_contained(recorded: str, desired: str) -> bool:
    inner, outer = _gtid_set(recorded), _gtid_set(desired)
    for source, part in inner.items():
        if source not in outer:
            return False
        bound = outer[source]
        if isinstance(part, int) and isinstance(bound, int):
            if part > bound:
                return False
        elif isinstance(part, list) and isinstance(bound, list):
            for low, high in part:
                if not any(b_low <= low and high <= b_high for b_low, b_high in bound):
                    return False
        else:
            return False
    return True


def _binlog_index(name: str) -> tuple[str, int]:
    base, _, number = name.rpartition(".")
    return (base, int(number)) if number.isdigit() else (name, -1)


def position_at_or_before(recorded: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether a history record's position is at or before the connector's offset
    (Debezium's binlog history record comparator): by GTID sets where both have them (equal
    sets fall through to the binlog coordinates); a recorded position without GTIDs is older
    than a desired one with them and vice versa; positions of different servers by time;
    else by binlog file, position, events and rows to skip."""
    recorded_gtids, desired_gtids = recorded.get("gtids"), desired.get("gtids")
    if desired_gtids:
        if not recorded_gtids:
            return True
        if _gtid_set(str(recorded_gtids)) != _gtid_set(str(desired_gtids)):
            return _gtids_contained(str(recorded_gtids), str(desired_gtids))
    elif recorded_gtids:
        return False
    recorded_server, desired_server = recorded.get("server_id"), desired.get("server_id")
    if recorded_server is not None and desired_server is not None and recorded_server != desired_server:
        return int(recorded.get("ts_sec", 0)) <= int(desired.get("ts_sec", 0))

    def coordinates(position: Mapping[str, Any]) -> tuple[tuple[str, int], int, int, int]:
        file_index = _binlog_index(str(position.get("file", "")).lower())
        pos, event, row = (int(position.get(key) or 0) for key in ("pos", "event", "row"))
        return file_index, pos, event, row

    return coordinates(recorded) <= coordinates(desired)


# -- the topic -----------------------------------------------------------------------------------


class SchemaHistory:
    """The schema history of one connector (``topic.prefix`` = ``server_name``) in ``topic``.

    ``client_config`` holds ``bootstrap.servers`` and any other librdkafka settings (the
    connector's ``schema.history.internal.{producer,consumer}.*`` passthrough), given to every
    client. With ``store_only_captured_tables_ddl`` and a ``captured(database, table)``
    predicate, statements that change only tables the connector does not capture are not
    recorded. With ``skip_unparseable_ddl``, recovery skips recorded statements the parser
    cannot read instead of failing.
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, str],
        server_name: str,
        recovery_attempts: int = 100,
        store_only_captured_tables_ddl: bool = False,
        skip_unparseable_ddl: bool = False,
        captured: Callable[[str, str], bool] | None = None,
        recovery_poll_interval_ms: int = 100,
        request_timeout_s: float = 30.0,
    ) -> None:
        if "bootstrap.servers" not in client_config:
            raise ConnectException("the schema history needs bootstrap.servers")
        self.topic = topic
        self.server_name = server_name
        self.recovery_attempts = recovery_attempts
        self.store_only_captured_tables_ddl = store_only_captured_tables_ddl
        self.skip_unparseable_ddl = skip_unparseable_ddl
        self.captured = captured
        self.poll_interval_s = recovery_poll_interval_ms / 1000
        self.timeout_s = request_timeout_s
        self._config: dict[str, str | int | float | bool] = dict(client_config)
        self._producer: Producer | None = None

    def _admin(self) -> AdminClient:
        return AdminClient(self._config)

    def _topic_metadata(self, admin: AdminClient) -> Any:
        # All topics, not list_topics(topic=...), which may auto-create the topic.
        return admin.list_topics(timeout=self.timeout_s).topics.get(self.topic)

    def ensure_topic(self) -> None:
        """Create the topic as Debezium does (1 partition, delete policy, unlimited retention)
        unless it exists; an existing topic must have exactly one partition."""
        admin = self._admin()
        if self._topic_metadata(admin) is None:
            new = NewTopic(self.topic, num_partitions=1, config=dict(TOPIC_CONFIG))
            try:
                admin.create_topics([new], operation_timeout=self.timeout_s)[self.topic].result(
                    self.timeout_s
                )
                log.info("created the schema history topic %s", self.topic)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise ConnectException(
                        f"cannot create the schema history topic {self.topic}: {exc}"
                    ) from exc
        metadata = self._topic_metadata(admin)
        if metadata is not None and len(metadata.partitions) != 1:
            raise ConnectException(
                f"the schema history topic {self.topic} has {len(metadata.partitions)} partitions; "
                "it must have exactly one, or the order of its statements is lost"
            )

    def topic_config(self) -> dict[str, str]:
        """The topic's configuration as the broker reports it."""
        resource = ConfigResource(ConfigResource.Type.TOPIC, self.topic)
        admin = self._admin()  # kept referenced: a collected client fails its futures
        entries = admin.describe_configs([resource])[resource].result(self.timeout_s)
        return {name: entry.value for name, entry in entries.items()}

    def exists(self) -> bool:
        """Whether the topic exists and holds at least one record."""
        if self._topic_metadata(self._admin()) is None:
            return False
        consumer = self._consumer()
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=self.timeout_s)
        finally:
            consumer.close()
        return bool(high > low)

    def record(
        self,
        source: Mapping[str, Any],
        position: Mapping[str, Any],
        database: str | None,
        ddl: str,
        changes: Sequence[TableChange],
        ts_ms: int,
    ) -> None:
        """Append one statement; returns once the broker has it."""
        if self.store_only_captured_tables_ddl and self.captured is not None and changes:
            ids = [c.id for c in changes] + [c.previous_id for c in changes if c.previous_id]
            if not any(self.captured(*i.split(".", 1)) for i in ids):
                return
        value = history_value(self.server_name, position, database, ddl, changes, ts_ms, source)
        failures: list[str] = []

        def delivered(err: KafkaError | None, _msg: Any) -> None:
            if err is not None:
                failures.append(str(err))

        if self._producer is None:
            self._producer = Producer({**self._config, "acks": "all", "linger.ms": 0})
        self._producer.produce(self.topic, json.dumps(value).encode(), partition=0, on_delivery=delivered)
        remaining = self._producer.flush(self.timeout_s)
        if failures or remaining:
            why = failures[0] if failures else "timed out"
            raise ConnectException(f"cannot record DDL in the schema history topic {self.topic}: {why}")

    def _consumer(self) -> Consumer:
        return Consumer(
            {
                **self._config,
                "group.id": f"{self.server_name}-schemahistory",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )

    def recover(self, offset: Mapping[str, Any] | None, catalog: SchemaCatalog) -> None:
        """Replay into ``catalog`` every recorded statement of this server at or before
        ``offset`` (all of them when ``offset`` is None)."""
        consumer = self._consumer()
        try:
            partition = TopicPartition(self.topic, 0)
            try:
                low, high = consumer.get_watermark_offsets(partition, timeout=self.timeout_s)
            except KafkaException as exc:
                raise ConnectException(f"cannot read the schema history topic {self.topic}: {exc}") from exc
            if high <= low:
                return
            consumer.assign([TopicPartition(self.topic, 0, low)])
            empty = applied = 0
            # The consumer's position, not the last record's offset, says how far the read got:
            # transaction markers take offsets no record has.
            while self._position(consumer) < high:
                message = consumer.poll(self.poll_interval_s)
                error = message.error() if message is not None else None
                if message is None or error is not None:
                    if error is not None and error.code() != KafkaError._PARTITION_EOF:
                        raise ConnectException(f"cannot read the schema history topic {self.topic}: {error}")
                    empty += 1
                    if empty > self.recovery_attempts:
                        raise ConnectException(
                            f"the schema history topic {self.topic} could not be read to its end (offset "
                            f"{high}) in {self.recovery_attempts} polls; increase "
                            "schema.history.internal.kafka.recovery.attempts"
                        )
                    continue
                empty = 0
                applied += self._replay(message.value(), message.offset() or 0, offset, catalog)
                if (message.offset() or 0) >= high - 1:
                    break
            log.info("recovered %d DDL statements from the schema history topic %s", applied, self.topic)
        finally:
            consumer.close()

    def _position(self, consumer: Consumer) -> int:
        (at,) = consumer.position([TopicPartition(self.topic, 0)])
        return int(at.offset) if at.offset >= 0 else -1

    def _replay(
        self, raw: bytes | None, at: int, offset: Mapping[str, Any] | None, catalog: SchemaCatalog
    ) -> int:
        try:
            document = json.loads(raw or b"")
        except ValueError as exc:
            raise ConnectException(f"schema history record {self.topic}@{at} is not JSON: {exc}") from exc
        if not isinstance(document, dict) or document.get("source", {}).get("server") != self.server_name:
            return 0
        recorded = document.get("position") or {}
        try:
            if offset is not None and not position_at_or_before(recorded, offset):
                return 0
        except (ValueError, TypeError) as exc:
            raise ConnectException(
                f"schema history record {self.topic}@{at}: cannot compare its position {recorded} "
                f"with the offset {dict(offset or {})}: {exc}"
            ) from exc
        ddl = document.get("ddl")
        if not ddl:
            return 0
        try:
            catalog.apply(ddl, document.get("databaseName"))
        except DdlError as exc:
            if not self.skip_unparseable_ddl:
                raise DdlError(f"schema history record {self.topic}@{at}: {exc}") from exc
            log.warning("skipping unparseable DDL at %s@%d: %s", self.topic, at, exc)
            return 0
        return 1

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(self.timeout_s)
            self._producer = None
