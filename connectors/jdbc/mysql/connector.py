"""MySqlConnector and MariaDbConnector: Debezium's MySQL and MariaDB connectors, one task.

The connector only validates the configuration and hands it to its single task: one
binlog is one ordered stream, which one reader consumes (Debezium's MySQL connector runs
one task whatever ``tasks.max`` says).
"""

from __future__ import annotations

from collections.abc import Mapping

from connect.api import ExactlyOnceSupport, Task
from connectors.jdbc.debezium.connector import SingleTaskConnector
from connectors.jdbc.mysql.config import MySqlCdcConfig
from connectors.jdbc.mysql.task import VERSION, MariaDbSourceTask, MySqlSourceTask

__all__ = ["MariaDbConnector", "MySqlConnector"]


class MySqlConnector(SingleTaskConnector):
    """Captures row changes of MySQL databases from the binlog (row-based) and writes them as
    Debezium change events to ``<topic.prefix>.<database>.<table>``, DDL to the schema
    history topic and, with ``include.schema.changes``, to ``<topic.prefix>``.

    Needs ``log_bin``, ``binlog_format=ROW``, ``binlog_row_image=FULL`` and a user with
    SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE and REPLICATION CLIENT.
    """

    Config = MySqlCdcConfig
    aliases = ("io.debezium.connector.mysql.MySqlConnector",)

    def version(self) -> str:
        return VERSION

    def task_class(self) -> type[Task]:
        return MySqlSourceTask

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        # Every streamed record's offset says which transaction it belongs to and how much
        # of it was delivered; a restarted task re-reads that transaction from its start
        # and skips exactly what the committed offset covers. A snapshot cut short is taken
        # again from the start (its records carry no finer position), as Debezium does.
        return ExactlyOnceSupport.SUPPORTED


class MariaDbConnector(MySqlConnector):
    """Debezium's MariaDB connector: the MySQL connector's keys and events, with
    ``connector: "mariadb"`` in the source block and MariaDB GTIDs (domain-server-seq)."""

    aliases = ("io.debezium.connector.mariadb.MariaDbConnector",)

    def task_class(self) -> type[Task]:
        return MariaDbSourceTask
