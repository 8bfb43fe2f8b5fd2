"""``JdbcSinkConnector`` (Confluent's class name and keys) and ``DebeziumJdbcSinkConnector``
(Debezium's): the same writer behind two configurations, so that published configs of
either run unchanged.

The connectors check the configuration (``Config``) and hand every task the same
settings; the worker spreads the topics' partitions over the tasks.
"""

from __future__ import annotations

from typing import ClassVar

from connect.api import SinkConnector, Task
from connectors.jdbc.sink.config import ConfluentSinkConfig, DebeziumSinkConfig
from connectors.jdbc.sink.task import VERSION, DebeziumJdbcSinkTask, JdbcSinkTask


class JdbcSinkConnector(SinkConnector):
    """Writes topics into database tables, Confluent's ``JdbcSinkConnector``.

    Minimal configuration::

        connector.class=io.confluent.connect.jdbc.JdbcSinkConnector
        topics=orders
        connection.url=jdbc:postgresql://db:5432/shop
        connection.user=app
        connection.password=...
        insert.mode=upsert
        pk.mode=record_key
        auto.create=true

    See ``ConfluentSinkConfig`` for every key and ``docs/connectors/jdbc-sink.md``.
    """

    Config: ClassVar[type[ConfluentSinkConfig] | type[DebeziumSinkConfig]] = ConfluentSinkConfig
    aliases = ("io.confluent.connect.jdbc.JdbcSinkConnector",)

    def __init__(self) -> None:
        self.props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def start(self, props: dict[str, str]) -> None:
        self.Config.parse(props)
        self.props = dict(props)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class DebeziumJdbcSinkConnector(JdbcSinkConnector):
    """Debezium's ``JdbcSinkConnector``: change events (``before``/``after``/``op``) applied
    to tables without an unwrap transformation; flat records are written as they are.

    Minimal configuration::

        connector.class=io.debezium.connector.jdbc.JdbcSinkConnector
        topics=shop.inventory.orders
        connection.url=jdbc:postgresql://db:5432/replica
        connection.username=app
        connection.password=...
        insert.mode=upsert
        primary.key.mode=record_key
        delete.enabled=true
        schema.evolution=basic
    """

    Config = DebeziumSinkConfig
    aliases = ("io.debezium.connector.jdbc.JdbcSinkConnector",)

    def task_class(self) -> type[Task]:
        return DebeziumJdbcSinkTask
